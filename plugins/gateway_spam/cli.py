"""`gateway spam classify FILE|-` for a mail pipeline, `gateway spam client` to build its quickest form, `gateway
spam why FILE` for the person's terminal only.

classify prints one line, `spam 0.998712` (the verdict, then the score), and exits as bogofilter does, so a
procmail or maildrop rule can test the code: 0 spam, 1 ham, 2 unsure, 3 error (no model, unreadable file), and
4 for a file that is not mail. It is `spamfilter.classify`'s work with the config's cutoffs; a rule that runs for
every message runs `gateway-spam-classify` itself (`--command` prints its quickest form), which starts without the
gateway and hands the message to the long-lived classifier when one runs.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import click

from gateway import PluginHost, plural

SPAM, HAM, UNSURE, ERROR, NOT_MAIL = 0, 1, 2, 3, 4
EXIT_CODES = {"spam": SPAM, "ham": HAM, "unsure": UNSURE}


def _terminal_progress() -> Callable[[str, int, int], None] | None:
    """A progress line on standard error, rewritten in place, when it is a terminal (else nothing)."""
    if not sys.stderr.isatty():
        return None
    last = [0.0, ""]

    def show(phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if phase == last[1] and done < total and now - last[0] < 0.2:
            return
        last[0], last[1] = now, phase
        share = f" {100 * done // total}%" if total else ""
        sys.stderr.write(f"\r\x1b[K{phase}: {done:,} of {total:,}{share}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def commands(gateway: PluginHost) -> list[click.Command]:
    def scored(file: str):  # type: ignore[no-untyped-def]
        from spamfilter.classify import _read
        from spamfilter.tokens import is_mail

        from gateway_spam.model import Model
        from gateway_spam.tokens import stripped, tokens
        from gateway_spam.training import model_path

        path = model_path(gateway.folders.data)
        if not path.exists():
            click.echo("error: the filter has no model yet (train it: spam_train, or gateway spam train)", err=True)
            sys.exit(ERROR)
        try:
            raw = _read(file)
        except OSError as error:
            click.echo(f"error: {file}: {error.strerror}", err=True)
            sys.exit(ERROR)
        if not is_mail(raw):
            click.echo(f"error: {file}: this is not a mail message", err=True)
            sys.exit(NOT_MAIL)
        try:
            found = tokens(stripped(raw))
        except Exception:  # noqa: BLE001 - a stranger's message: broken or nested too deep to read
            click.echo(f"error: {file}: the message cannot be read (its structure is broken or nested too deep)",
                       err=True)
            sys.exit(ERROR)
        model = Model.load(path)
        if model.stale:  # the person's terminal: said here, never on a delivery rule's line
            from gateway_spam.tools import stale_sentence

            click.echo(f"note: {stale_sentence(model.tokens_version)}", err=True)
        return model.score(found, keep_clues=True)

    def cutoffs() -> tuple[float, float]:
        from spamfilter.score import HAM_CUTOFF, SPAM_CUTOFF

        return (float(gateway.settings.get("ham_cutoff", HAM_CUTOFF)),
                float(gateway.settings.get("spam_cutoff", SPAM_CUTOFF)))

    @click.group("spam")
    def group() -> None:
        """The spam filter."""

    @group.command("classify")
    @click.argument("file")
    def classify(file: str) -> None:
        """Print the verdict and score of one message (FILE, or - for standard input).

        Exit code: 0 spam, 1 ham, 2 unsure, 3 error (as bogofilter's), 4 not mail, for procmail or maildrop.
        A rule run for every message is faster with `gateway-spam-classify FILE` (the same verdict).
        """
        from spamfilter.classify import run

        from gateway_spam.training import model_path

        model_path(gateway.folders.data)  # a model of the earlier format is converted here, once
        code, line = run(file, gateway.folders.data, cutoffs())
        click.echo(line, err=code in (ERROR, NOT_MAIL))
        sys.exit(code)

    @group.command("client")
    def client() -> None:
        """Build the compiled client of the long-lived classifier and print its path, for a delivery rule.

        It answers as `gateway-spam-classify` does, in about the time bogofilter takes, while
        `gateway-spam-classify --serve` runs; otherwise it runs that command, which judges the message itself.
        Needs a C compiler (CC, else cc). Build it again after upgrading or moving the gateway.
        """
        from gateway_spam.client import ClientError, build

        try:
            path = build(gateway.folders.data)
        except ClientError as error:
            raise click.ClickException(str(error)) from None
        click.echo(str(path))

    @group.command("why")
    @click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @click.option("--clues", default=30, show_default=True, help="how many of the strongest tokens to show")
    def why(file: Path, clues: int) -> None:
        """Why the filter scores a message so: its strongest tokens (for your terminal only, never an agent)."""
        score = scored(str(file))
        click.echo(f"{score.verdict(*cutoffs())} {score.probability:.6f}")
        for token, probability in score.clues[:clues]:
            click.echo(f"  {probability:.4f}  {token}")

    def train_settings() -> dict:
        return {"spam_folders": list(gateway.settings.get("spam_folders", ["Junk", "Spam"])),
                "ham_folders": list(gateway.settings.get("ham_folders", ["INBOX", "Archive"])),
                "ham_cutoff": cutoffs()[0], "spam_cutoff": cutoffs()[1], "data": str(gateway.folders.data),
                "config": str(gateway.folders.config.parent.parent), "cache": str(gateway.folders.cache),
                # The accounts of the config this run of gateway read (`gateway --config PATH` included).
                "mail_accounts": list(gateway.plugin_settings("mail").get("accounts", []))}

    def report(result: dict) -> None:
        if "recounted_from_version" in result and not result.get("dry_run"):
            was = result["recounted_from_version"]
            click.echo(f"The model was counted with {'version ' + str(was) if was is not None else 'an unrecorded version'}"
                       f" of the tokenizer: counted anew with version {result['tokens_version']}.")
        online = result["online"]
        click.echo(f"{online['messages']} messages: FP {online['fp_percent']}%, FN {online['fn_percent']}%, "
                   f"unsure {online['unsure_percent']}%, (1-ROCA) {online['one_minus_roca_percent']}%")

    @group.command("train")
    @click.option("--dry-run", is_flag=True, help="evaluate only, write nothing")
    def train(dry_run: bool) -> None:
        """Evaluate, then train the model, here in the terminal (spam_train does it as a job)."""
        from gateway_spam import training

        result = training.train(train_settings(), dry_run=dry_run, progress=_terminal_progress())
        report(result)
        click.echo("dry run: nothing written" if dry_run else f"written: {', '.join(result['written'])}")

    @group.command("labels")
    @click.option("--undo-client", "undo", metavar="NAME", help="take away every label this client gave, then "
                  "train the model again without them")
    def labels_command(undo: str | None) -> None:
        """The labels, by the client that gave them (cli: your own command line); --undo-client NAME takes one
        client's labels away and trains the model again, as if it had never given them."""
        from gateway_spam import labels, training

        data = gateway.folders.data
        if undo is None:
            summary = labels.by_client(labels.entries(data))
            if not summary:
                click.echo("No labels yet.")
            for client, row in sorted(summary.items(), key=lambda item: item[1]["last"], reverse=True):
                versions = f" ({', '.join(row['versions'])})" if row["versions"] else ""
                click.echo(f"{client}{versions}: {plural(row['labels'], 'label')} ({row['spam']} spam, "
                           f"{row['ham']} ham), {row['first']} to {row['last']}")
            return
        removed = labels.remove_client(data, undo)
        if not removed:
            known = ", ".join(sorted(labels.by_client(labels.entries(data)))) or "none"
            raise click.ClickException(f"no labels given by {undo!r} (clients with labels: {known})")
        click.echo(f"Took away {plural(len(removed), 'label')} given by {undo}.")
        if not training.model_path(data).exists():
            click.echo("No model yet: nothing to train again.")
            return
        click.echo("Training the model again without them...")
        report(training.train(train_settings(), progress=_terminal_progress()))
        click.echo("The model is as if they had never been given.")

    return [group]
