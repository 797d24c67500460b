"""A remind reminder's address (`sioul:remind/<file>@<hash of its line>`): handed out by reminders, read back as a
resource, not moved by an edit elsewhere in its file, one per identical line, and placed by its whole line."""

from __future__ import annotations

import hashlib
import shutil
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import gateway_mail
import pytest

from gateway.testing import make_gateway

PARIS = ZoneInfo("Europe/Paris")
CANARY = "otterremindcanary"
PROJECTS = [{"id": "garden", "name": "Garden", "ai": True},
            {"id": "vault", "name": "Vault", "ai": False, "subjects": [CANARY]}]

pytestmark = pytest.mark.skipif(shutil.which("remind") is None,
                                reason="Debian's remind (apt install remind; .ci/run does)")


@pytest.fixture
def reminders(gateway_home: Path):
    folder = gateway_home / "reminders"
    folder.mkdir()
    tomorrow = (datetime.now(PARIS) + timedelta(days=1)).date()
    file = folder / "home.rem"

    def gateway():
        return make_gateway([gateway_mail], home=gateway_home, projects=PROJECTS, config={
            "gateway": {"plugins": ["mail"]}, "plugins": {"mail": {"remind": str(file), "timezone": "Europe/Paris"}}})

    return file, tomorrow, gateway


def _remind(answer) -> dict[str, dict]:
    assert not answer.is_error, answer.text
    return {r["for"]: r for r in answer.data["reminders"] if r["kind"] == "remind"}


def test_each_remind_reminder_is_handed_out_with_an_address_that_reads_it_back(reminders) -> None:
    file, tomorrow, gateway = reminders
    file.write_text(f"REM {tomorrow:%b %d %Y} AT 16:45 MSG Call Ada about the quinces%\nREM Mon MSG Weekly bins%\n")
    served = gateway()
    listed = served.call("reminders", {"days": 8})
    found = _remind(listed)
    call = found["Call Ada about the quinces"]
    assert call["address"].startswith("sioul:remind/home.rem@") and call["address"] in listed.text
    assert call["address"] in listed.given and found["Weekly bins"]["address"] != call["address"]
    read = served.read(call["address"])
    assert not read.is_error, read.text
    assert read.text.splitlines()[:2] == ["Reminder: Call Ada about the quinces", "Written in: remind file home.rem, "
                                                                                  "line 1"]
    assert read.data["rings"] == [{"at": f"{tomorrow} 16:45", "for": "Call Ada about the quinces"}]
    weekly = served.read(found["Weekly bins"]["address"])
    assert len(weekly.data["rings"]) == 20 and weekly.data["more"] >= 30  # a year of Mondays, the first 20 listed


def test_an_edit_elsewhere_in_the_file_leaves_an_address_where_it_was(reminders) -> None:
    file, tomorrow, gateway = reminders
    line = f"REM {tomorrow:%b %d %Y} AT 09:00 MSG Water the lemon tree%"
    file.write_text(line + "\n")
    before = _remind(gateway().call("reminders", {"days": 3}))["Water the lemon tree"]["address"]
    file.write_text(f"# moved down\nREM {tomorrow:%b %d %Y} MSG Pay the rent%\n\n{line}\n")
    served = gateway()
    after = _remind(served.call("reminders", {"days": 3}))
    assert after["Water the lemon tree"]["address"] == before
    assert after["Water the lemon tree"]["source"] == "remind file home.rem, line 4"
    assert "line 4" in served.read(before).text
    # Its own line edited, it is another reminder: the old address finds nothing.
    file.write_text(line.replace("09:00", "10:00") + "\n")
    assert gateway().read(before).is_error


def test_identical_lines_and_continued_lines_have_addresses_of_their_own(reminders) -> None:
    file, tomorrow, gateway = reminders
    same = f"REM {tomorrow:%b %d %Y} MSG Feed the cat%"
    file.write_text(f"{same}\r\n{same}\r\nREM {tomorrow:%b %d %Y} MSG Two \\\r\n  lines%\r\n")
    served = gateway()
    rings = [r for r in served.call("reminders", {"days": 3}).data["reminders"] if r["kind"] == "remind"]
    addresses = {r["source"]: r["address"] for r in rings}
    assert len(set(addresses.values())) == 3
    first, second = addresses["remind file home.rem, line 1"], addresses["remind file home.rem, line 2"]
    assert second == first + "-2"
    assert "line 2" in served.read(second).text and "line 4" in served.read(addresses["remind file home.rem, "
                                                                                       "line 4"]).text


def test_a_word_of_the_line_that_remind_leaves_out_of_the_body_still_keeps_the_reminder(reminders) -> None:
    file, tomorrow, gateway = reminders
    # remind's %"...%" shows only the quoted part in a calendar: the closed project's word is on the line only.
    file.write_text(f'REM {tomorrow:%b %d %Y} AT 10:00 MSG %"Meeting%" about {CANARY}\n'
                    f"REM {tomorrow:%b %d %Y} AT 11:00 MSG Open one%\n")
    served = gateway()
    answer = served.call("reminders", {"days": 3})
    assert set(_remind(answer)) == {"Open one"} and answer.data["left_out"] == 1
    assert "Meeting" not in answer.text


def test_census_and_why_know_remind_reminders(reminders, gateway_home: Path) -> None:
    from gateway_mail.plan import remind

    from gateway.api.context import Folders, PluginHost
    from gateway.gate.access import Gate

    file, tomorrow, _gateway = reminders
    file.write_text(f"REM {tomorrow:%b %d %Y} MSG {CANARY} box%\nREM {tomorrow:%b %d %Y} MSG Open one%\n")
    host = PluginHost("mail", Folders.from_environment().for_plugin("mail"), {"remind": str(file), "timezone": "Europe/Paris"},
                      gate=Gate())
    listed = list(remind.census(host))
    assert [source for source, _traits in listed] == ["remind file home.rem"] * 2
    assert any(CANARY in " ".join(traits.words) for _source, traits in listed)
    assert remind.traits_at(host, "sioul:remind/home.rem@" + "0" * 12) is None
    assert remind.traits_at(host, "sioul:task/x") is None


def test_a_reminder_is_tied_by_its_address_and_a_closed_projects_is_not(reminders) -> None:
    file, tomorrow, gateway = reminders
    file.write_text(f"REM {tomorrow:%b %d %Y} MSG Prune the roses%\n"
                    f"REM {tomorrow:%b %d %Y} MSG Sign the {CANARY} papers%\n")
    served = gateway()
    found = _remind(served.call("reminders", {"days": 3}))
    roses = found["Prune the roses"]["address"]
    assert all(CANARY not in title for title in found)  # the closed project's reminder is not handed out
    tied = served.call("link", {"address": roses, "to": "sioul:project/garden"})
    assert not tied.is_error and tied.data["made"], tied.text
    links = served.call("links", {"address": "sioul:project/garden"})
    assert not links.is_error and roses in links.text, links.text
    # Its address worked out from its file, the closed one is refused as a thing not there, and names nothing.
    line = f"REM {tomorrow:%b %d %Y} MSG Sign the {CANARY} papers%"
    kept = f"sioul:remind/home.rem@{hashlib.sha256(line.encode()).hexdigest()[:12]}"
    nowhere = f"sioul:remind/home.rem@{'0' * 12}"
    refusals = [served.call("link", {"address": address, "to": "sioul:project/garden"}) for address in (kept, nowhere)]
    assert all(r.is_error and CANARY not in r.text for r in refusals)
    assert refusals[0].text.replace(kept, "X") == refusals[1].text.replace(nowhere, "X")  # alike: nothing to probe
    assert served.call("links", {"address": "sioul:project/garden"}).text.count("sioul:remind/") == 1
