"""A person's own setup, as a new user meets it through the command line: a wrong path is said (doctor exits 1 and
the tool names the key), a Maildir that goes away keeps its rows and comes back whole, `gateway watch --once` says
what it refreshed, and a folder written as search_mail prints it is the folder it takes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from gateway_mail.mail import sample

from gateway.commands.cli import main
from gateway.testing import write_config


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def home(gateway_home: Path) -> Path:
    mail = gateway_home / "Mail"
    for number in range(3):
        sample.deliver(mail / "personal" / "INBOX", sample.message(subject=f"Budget note {number}",
                                                                   body="the budget for the roof"))
        sample.deliver(mail / "work" / "INBOX", sample.message(subject=f"Budget review {number}",
                                                               body="the budget for the quarter"))
    sample.deliver(mail / "work" / "Archive", sample.message(subject="Budget archive", body="an old budget"))
    (gateway_home / "tasks" / "home").mkdir(parents=True)
    write_config(gateway_home, {"gateway": {"plugins": ["mail"]}, "plugins": {"mail": {
        "accounts": [{"name": "personal", "maildir": "~/Mail/personal"},
                     {"name": "work", "maildir": "~/Mail/work"}],
        "tasks": "~/tasks"}}}, projects=[])
    return gateway_home


def _set_mail(home: Path, **changes: object) -> None:
    import tomllib

    path = write_config(home)
    config = tomllib.loads(path.read_text())
    config["plugins"]["mail"].update(changes)
    write_config(home, config)


def test_a_wrong_maildir_and_a_wrong_tasks_folder_are_problems_doctor_names(home: Path) -> None:
    _set_mail(home, accounts=[{"name": "personal", "maildir": "~/Mail/persnal"}], tasks="~/nowhere/tasks")
    doctor = _run("doctor")
    assert doctor.exit_code == 1
    assert ("mail: the Maildir of account personal, " in doctor.output
            and "Mail/persnal, does not exist: [plugins.mail] accounts" in doctor.output)
    assert "nowhere/tasks, does not exist: [plugins.mail] tasks" in doctor.output
    assert "No problem found" not in doctor.output
    # The tools that read them say so, never "nothing here".
    tasks = _run("call", "list_tasks", "{}")
    assert "the task lists folder ~/nowhere/tasks does not exist ([plugins.mail] tasks" in tasks.output
    search = _run("call", "search_mail", '{"query": "budget"}')
    assert "The Maildir of account personal, ~/Mail/persnal, does not exist" in search.output
    assert str(home) not in search.output  # the person's home is never spelled out to an agent


def test_a_maildir_gone_for_a_while_keeps_its_rows_and_comes_back_whole(home: Path) -> None:
    first = _run("call", "search_mail", '{"query": "budget", "account": "work"}')
    assert "4 messages matching" in first.output
    shutil.move(home / "Mail" / "work", home / "Mail" / "work.unmounted")
    gone = _run("call", "search_mail", '{"query": "budget"}')
    assert "3 messages matching" in gone.output  # only personal's: work's are kept aside, not shown
    assert "The Maildir of account work, ~/Mail/work, does not exist" in gone.output
    porch = _run("call", "porch", '{"open": true}')
    assert "The Maildir of account work, ~/Mail/work, does not exist" in porch.output
    shutil.move(home / "Mail" / "work.unmounted", home / "Mail" / "work")
    back = _run("call", "search_mail", '{"query": "budget", "account": "work"}')
    assert "4 messages matching" in back.output and "does not exist" not in back.output
    # Nothing was parsed again: the rows were kept while the root was away.
    reindex = _run("mail", "index")
    assert reindex.exit_code == 0 and reindex.output.startswith("0 read, 0 moved or reflagged, 0 removed")


def test_a_folder_written_as_search_mail_prints_it_is_the_folder_it_takes(home: Path) -> None:
    printed = _run("call", "search_mail", '{"query": "archive"}')
    assert "work/Archive" in printed.output
    by_printed = _run("call", "search_mail", '{"query": "budget", "folder": "work/Archive"}')
    by_parts = _run("call", "search_mail", '{"query": "budget", "account": "work", "folder": "Archive"}')
    assert "1 message matching" in by_printed.output
    assert by_printed.output.splitlines()[1:] == by_parts.output.splitlines()[1:]


def test_watch_once_refreshes_the_mail_and_says_how_long_it_took(home: Path) -> None:
    result = _run("watch", "--once")
    assert result.exit_code == 0
    line = next(line for line in result.output.splitlines() if " mail: " in line)
    assert "7 new" in line and " ms)" in line
    again = _run("watch", "--once")
    assert next(line for line in again.output.splitlines() if " mail: " in line).split(" mail: ")[1].startswith("0 new")


def test_one_timezone_for_every_plugin_and_a_plugin_key_overrides_it(home: Path) -> None:
    import tomllib

    path = write_config(home)
    config = tomllib.loads(path.read_text())
    config["gateway"]["timezone"] = "Asia/Tokyo"
    write_config(home, config)
    search = _run("call", "search_mail", '{"query": "budget", "account": "work"}')
    assert " JST" in search.output and " UTC" not in search.output
    assert "(Asia/Tokyo, now" in _run("call", "list_tasks", "{}").output
    _set_mail(home, timezone="Europe/Paris")  # the plugin's own key wins over the gateway's
    assert "(Europe/Paris, now" in _run("call", "list_tasks", "{}").output
    config["gateway"]["timezone"] = "Mars/Olympus"
    write_config(home, config)
    refused = _run("call", "list_tasks", "{}")
    assert refused.exit_code != 0 and "[gateway] timezone must be a zone this computer knows" in refused.output


def test_search_mail_says_how_many_match_and_when_more_exist(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from gateway_mail.mail import answers

    for number in range(30):
        sample.deliver(home / "Mail" / "personal" / "Archive", sample.message(subject=f"Harvest {number}",
                                                                              body="the harvest list"))
    shown = _run("call", "search_mail", '{"query": "harvest", "limit": 20}')
    assert "20 shown of 30 messages matching" in shown.output
    as_json = _run("call", "--json", "search_mail", '{"query": "harvest", "limit": 20}')
    data = json.loads(as_json.stdout)
    assert (data["total"], data["more"], len(data["hits"])) == (30, False, 20)
    monkeypatch.setattr(answers, "TOTAL_BOUND", 25)
    bounded = _run("call", "search_mail", '{"query": "harvest", "limit": 20}')
    assert "20 shown of more than 25 messages matching" in bounded.output
    few = _run("call", "search_mail", '{"query": "harvest", "limit": 50}')
    assert "30 messages matching, newest first" in few.output


def test_a_notmuch_users_words_work_and_fts5_syntax_still_does(home: Path) -> None:
    sample.deliver(home / "Mail" / "personal" / "INBOX", sample.message(
        sender="Ada Example <ada@example.net>", subject="Tuesday?", body="See invoice-2291.pdf for the roof."))
    by_sender = _run("call", "search_mail", '{"query": "from:ada@example.net"}')
    assert "1 message matching" in by_sender.output and "Tuesday?" in by_sender.output
    for query in ("ada@example.net", "invoice-2291.pdf", "subject:Tuesday", "roof AND invoice*", '"the roof"'):
        found = _run("call", "search_mail", json.dumps({"query": query}))
        assert found.exit_code == 0 and "Tuesday?" in found.output, (query, found.output)
    said = _run("call", "search_mail", '{"query": "mimetype:application/pdf"}')
    assert said.exit_code != 0 and "mimetype: is not searchable; search_mail takes words, from:, to:" in said.output
