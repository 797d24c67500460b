"""The training job's work: gather the corpus, evaluate (online, then k-fold), then train and save the model.

`settings` is what the tool put in the job's file: the spam table's values and the folders (`data`, `config`).
A dry run reads and evaluates the same way and writes no file (its job file aside).
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Callable, Iterator
from itertools import takewhile
from pathlib import Path
from typing import Any

from maildirs import accounts_in, unique_of
from maildirs.conversations import ids_of_headers
from spamfilter import store
from spamfilter.score import STAMP as SCORE_STAMP

from gateway import clip, mask, usable_cores
from gateway_spam import corpus, evaluation
from gateway_spam.kept import Kept, identity_of, signature, stored
from gateway_spam.model import LEGACY, Model, is_stale, version_of
from gateway_spam.tokens import MAX_TEXT, header_text, parse, stripped, texts, tokens_of

Progress = Callable[[str, int, int], None]
POOL_FROM = 200  # messages before a pool of processes reads them (its start costs a few tenths of a second)
POOL_CHUNK = 64  # messages a pool process is given at a time
POOL_LIMIT = 8  # processes at most, whatever the machine's count of cores


def model_path(data: Path) -> Path:
    """The model file; one of the earlier format (gzipped JSON, loaded whole) is converted on first use."""
    path = data / store.NAME
    legacy = data / LEGACY
    if not path.exists() and legacy.exists():
        Model.load(path).save(path)
        legacy.unlink(missing_ok=True)
    return path


def recorded_version(path: Path) -> int | None | bool:
    """The tokenizer's version a model file records (None: not recorded); False when there is no readable model."""
    try:
        table = store.Table(path)
    except store.ModelError:
        return False
    table.close()
    return version_of(table.tokens_version)


def evaluation_path(data: Path) -> Path:
    return data / "evaluation.json"


_SPLIT = "\n\n\x1d\n\n"  # between subject and text while they are masked as one unit


def masked_subject(message: Any) -> str:
    """The subject masked together with the text (as the mail plugin does), so a code the text names is hidden."""
    subject = header_text(message, "subject")
    text = " ".join(texts(message)[0])[:MAX_TEXT]
    unit = mask(subject + _SPLIT + text)
    masked, split, _text = unit.partition(_SPLIT)
    return clip(masked if split else subject, 200)


def envelope(message: Any, place: corpus.Place, key: str) -> dict[str, Any]:
    """What an agent may be shown of a message: masked, each field on one line, never its text.

    `ids` (the ids it names, which place it in its conversation) is for the gate alone: `Shown.filter` drops it.
    """
    name, address = corpus.sender_of(message)
    ids = ids_of_headers(*(header_text(message, h) for h in ("message-id", "in-reply-to", "references")))
    shown = {"sender": clip(address, 200), "name": clip(name, 80), "subject": masked_subject(message),
             "date": clip(header_text(message, "date"), 60), "account": place.account, "folder": place.folder,
             "address": f"spam:corpus/{place.corpus_id}" if place.corpus_id else key if key.startswith("mid:")
             else str(place.path), "ids": list(ids)}
    return shown


def _labelled_elsewhere(labels: dict[str, dict[str, Any]], seen: set[str]) -> list[corpus.Place]:
    """Labelled messages in no spam or ham folder: found by the place their label recorded."""
    found = []
    for key, entry in labels.items():
        place = str(entry.get("place", ""))
        if key in seen or not place.startswith("/"):
            continue
        path = Path(place)
        if not path.is_file():  # its flags changed its name: the same unique name in cur/ or new/
            unique = unique_of(path.name)
            candidates = [p for sub in ("cur", "new") if (path.parent.parent / sub).is_dir()
                          for p in (path.parent.parent / sub).iterdir() if unique_of(p.name) == unique]
            if not candidates:
                continue
            path = candidates[0]
        found.append(corpus.Place(path, None, str(entry.get("account", "")), str(entry.get("folder", ""))))
    return found


def gather(settings: dict[str, Any], progress: Progress | None = None) -> tuple[list[evaluation.Sample], dict]:
    """Every corpus message once (duplicates by body removed), labelled, tokenized without its leaking headers."""
    data, config = Path(settings["data"]), Path(settings["config"])
    # The accounts as the core read them when the job started (the job's process never reads the config file).
    accounts = accounts_in({"accounts": settings.get("mail_accounts", [])}, config)
    labels = corpus.read_labels(data)
    places = list(corpus.folder_places(accounts, settings["spam_folders"], settings["ham_folders"]))
    places += list(corpus.fetched_places(data))
    samples: list[evaluation.Sample] = []
    digests: set[str] = set()
    seen_keys: set[str] = set()
    counts = {"read": 0, "duplicates": 0, "unreadable": 0}

    def take(place: corpus.Place, facts: tuple | None, source: bytes | None = None) -> None:
        if facts is None:
            counts["unreadable"] += 1
            return
        key, digest, when, found = facts
        label = corpus.label_of(place, key, labels)
        if label is None or key in seen_keys or digest in digests:
            counts["read"] += 1
            counts["duplicates"] += label is not None
            return
        if found is None:  # its text could not be read: counted, never a failure
            counts["unreadable"] += 1
            return
        # The envelope is made later, for the worst errors alone: `place` says where to read it from.
        counts["read"] += 1
        seen_keys.add(key)
        digests.add(digest)
        samples.append(evaluation.Sample(key, label, when, found, {"place": place},
                                         identity_of(found) if source is None else source))

    kept = Kept(settings.get("cache"))
    try:
        for number, (place, facts, source) in enumerate(read_all(places, kept, identities=True), start=1):
            take(place, facts, source)
            if progress and (number % 100 == 0 or number == len(places)):
                progress("reading the corpus", number, len(places))
        kept.forget_except({str(place.path) for place in places})
    finally:
        kept.close()
    for place in _labelled_elsewhere(labels, seen_keys):
        take(place, facts_of(place))
    return samples, counts


def keep(settings: dict[str, Any]) -> int:
    """Read the corpus's messages the facts store lacks into it (`gateway watch`'s refresh), and forget the files
    gone; how many were read."""
    data, config = Path(settings["data"]), Path(settings["config"])
    accounts = accounts_in({"accounts": settings.get("mail_accounts", [])}, config)
    places = list(corpus.folder_places(accounts, settings["spam_folders"], settings["ham_folders"]))
    places += list(corpus.fetched_places(data))
    kept = Kept(settings.get("cache"))
    try:
        known = kept.signatures()
        unread = [place for place in places if known.get(str(place.path)) != signature(place.path)]
        for _place, _facts, _source in read_all(unread, kept, from_kept=False):
            pass
        kept.forget_except({str(place.path) for place in places})
    finally:
        kept.close()
    return kept.given


def facts_of(place: corpus.Place) -> tuple[str, str, float | None, set[str] | None] | None:
    """What the corpus needs of one message: (key, body digest, time, tokens), time and tokens None when its text
    cannot be read; None when the message cannot be read at all. Parsed once, without its leaking headers (they
    hold neither the Message-ID nor the Date read here)."""
    raw = corpus.read_raw(place.path)
    if raw is None:
        return None
    try:
        message = parse(stripped(raw))
        key = corpus.key_of(raw, message)
    except Exception:  # noqa: BLE001 - a stranger's file (broken, nested too deep): counted, never a failure
        return None
    digest = corpus.body_digest(raw)
    try:
        return key, digest, corpus.when_of(message, place.path), tokens_of(message)
    except Exception:  # noqa: BLE001 - the same
        return key, digest, None, None


def _sent(facts: tuple | None) -> tuple[tuple | None, bytes | None]:
    """Facts as `read_all` gives them: the tokens as the store keeps them (`kept.stored`), with their identity."""
    if facts is None or facts[3] is None:
        return facts, None
    text, source = stored(facts[3])
    return (*facts[:3], text), source


def _facts_of_batch(places: list[corpus.Place]) -> list[tuple[tuple | None, bytes | None]]:
    """What a pool process sends back for its batch: each message's facts, `_sent`."""
    return [_sent(facts_of(place)) for place in places]


def _workers() -> int:
    """The pool's size: a process per core this process may run on, POOL_LIMIT at most."""
    return usable_cores(POOL_LIMIT)


def read_all(places: list[corpus.Place], kept: Kept | None = None, from_kept: bool = True,
             identities: bool = False) -> Iterator[tuple[corpus.Place, tuple | None, bytes | None]]:
    """Each place with its facts (`facts_of`, the tokens as the text the store keeps, `kept.stored`: `Sample` splits
    it when asked) and, with `identities`, the identity of its tokens as the store keeps them (`kept.identity`; None
    when not asked or not readable), in their order: those `kept` holds for the file as it is taken from it (unless
    `from_kept` is false: the caller chose places it lacks), the others read (by a pool of processes when there are
    many) and given to `kept`."""
    known = kept.rows(identities=identities) if kept is not None and from_kept else {}
    found: dict[int, tuple] = {}
    unread: list[tuple[int, tuple[int, int] | None]] = []
    for number, place in enumerate(places):
        stat = signature(place.path)
        row = known.get(str(place.path))
        if stat is not None and row is not None and row[:2] == stat:
            found[number] = row
        else:
            unread.append((number, stat))
    read = _read_all([places[number] for number, _stat in unread])
    stats = dict(unread) if kept is not None else {}
    for number, place in enumerate(places):
        if number in found:
            row = found.pop(number)
            yield place, row[2], row[3] if identities else None
            continue
        _place, (facts, source) = next(read)
        stat = stats.get(number)
        if stat is not None:
            kept.put(str(place.path), stat, facts)
        yield place, facts, source if identities else None


def _pool_context(multiprocessing: Any) -> Any:
    """How the pool's processes are made: forked from this process when it runs no other thread (the training
    command, a job's own process), so that they start at once with what it has imported; else by the fork server
    (a server's refresh: a fork copies other threads' locks as they are, held or not), which imports this module
    once for all of them."""
    import threading

    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["__main__", __name__])
    return context


def _worker_started() -> None:
    """A pool process's first step: the cycle collector on (a forked process has its parent's setting; parsing
    leaves cycles, each FeedParser one), never walking what the process was given at its start."""
    gc.freeze()
    gc.enable()


def _read_all(places: list[corpus.Place]) -> Iterator[tuple[corpus.Place, tuple[tuple | None, bytes | None]]]:
    """Each place with its facts and their tokens' identity (`_sent`), in their order: read by a pool of processes
    when there are many.

    The pool has a process per core (POOL_LIMIT at most), each given POOL_CHUNK messages at a time; it ends with
    the reading. A process that dies (a crash in a C extension, the kernel's out-of-memory killer) breaks the pool:
    the messages not read yet are then read here, one by one, as without a pool.
    """
    workers = _workers()
    if len(places) < POOL_FROM or workers < 2:
        for place in places:
            yield place, _sent(facts_of(place))
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    batches = [places[start:start + POOL_CHUNK] for start in range(0, len(places), POOL_CHUNK)]
    with ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context(multiprocessing),
                             initializer=_worker_started) as pool:
        pending = [pool.submit(_facts_of_batch, batch) for batch in batches]
        try:
            for batch, future in zip(batches, pending, strict=True):
                try:
                    found = future.result()
                except BrokenProcessPool:
                    found = _facts_of_batch(batch)
                yield from zip(batch, found, strict=True)
        finally:
            for future in pending:
                future.cancel()


def _with_envelopes(outcomes: list[evaluation.Outcome], ham_cutoff: float,
                    spam_cutoff: float) -> list[evaluation.Outcome]:
    """The outcomes `evaluation.worst` keeps, their envelopes made from their files (read again: a handful)."""
    kept = {id(o) for o in evaluation.worst_outcomes(outcomes, ham_cutoff, spam_cutoff)}
    chosen = []
    for outcome in outcomes:
        if id(outcome) not in kept:
            continue
        place = outcome.sample.envelope.get("place")
        raw = corpus.read_raw(place.path) if isinstance(place, corpus.Place) else None
        try:
            outcome.sample.envelope = envelope(parse(raw), place, outcome.sample.key) if raw is not None else {}
            if outcome.sample.envelope:  # its file, for the AI shield's verdict (never shown: tools.PRIVATE)
                outcome.sample.envelope["_file"] = str(place.path)
        except Exception:  # noqa: BLE001 - changed since it was read: shown without its envelope
            outcome.sample.envelope = {}
        chosen.append(outcome)
    return chosen


def train(settings: dict[str, Any], dry_run: bool = False, progress: Progress | None = None) -> dict[str, Any]:
    """Gather, evaluate online and train in one pass, then save.

    The online evaluation trains on every message after classifying it, so the model it ends with is the one a
    separate training pass would make (counts do not depend on their order): that model is saved. The k-fold view
    (`evaluation.k_fold`) is not run by the job: it scored every message a second time for a second opinion on
    the same figures.

    The evaluation is kept in the facts store (`Kept.keep_stream`) with when the model it ended with was written:
    the next training takes the outcomes of the unchanged start of its stream from it, and, when that start is the
    whole of the last stream and the model file is still the one it wrote (no label changed it since), the counts
    from that file rather than from the messages' tokens. When nothing changed at all (the same messages, labels and
    cutoffs), the model file is left as it is: it is already the model this training would write. A model file
    counted with another version of the tokenizer (or one that does not record it) is never taken: the counts are
    made anew from the messages' tokens, which the facts store holds in today's version, and the model is written
    with today's version (`recounted_from_version` in the result says which it replaced).
    """
    data = Path(settings["data"])
    ham_cutoff, spam_cutoff = float(settings["ham_cutoff"]), float(settings["spam_cutoff"])
    samples, counts = gather(settings, progress)
    total = len(samples)
    if progress:
        progress("evaluating online and training", 0, total)
    path = model_path(data)
    before = recorded_version(path)
    model = Model(cutoffs=(ham_cutoff, spam_cutoff))  # counted with today's tokenizer (`Model.tokens_version`)
    ended: list[Model] = []

    def whole() -> Model | None:
        """The model the kept evaluation ended with: the model file, if it is still the one that training wrote."""
        written = kept.model_written()
        if written is None or not path.exists():
            return None
        try:
            loaded = Model.load(path)
        except store.ModelError:
            return None
        if loaded.trained_at != written or loaded.stale:  # a stale model is counted anew, whatever the stream
            return None
        ended.append(loaded)
        return loaded

    kept = Kept(settings.get("cache"))
    # From here on nothing made is a cycle worth finding (the counts' hundreds of thousands of pairs, the tokens'
    # sets): the cycle collector, left on, walked them again and again (a sixth of this process's CPU).
    collecting = gc.isenabled()
    gc.disable()
    try:
        earlier = kept.stream(SCORE_STAMP)
        online = evaluation.online(samples, (lambda done: progress("evaluating online and training", done, total))
                                   if progress else None, model=model, earlier=earlier, whole=whole)
        # What each message's counts hold, so that a label taken back later subtracts exactly those tokens.
        model.sources = {sample.key: sample.source.hex() for sample in samples if sample.source is not None}
        # Nothing changed: the same stream, the model file training wrote for it, the same cutoffs in it.
        unchanged = (bool(ended) and len(online) == len(earlier) and model.counts is ended[0].counts
                     and ended[0].cutoffs == (ham_cutoff, spam_cutoff))
        result = {
            "dry_run": dry_run,
            "corpus": {**counts, "messages": total, "spam": sum(s.label == "spam" for s in samples),
                       "ham": sum(s.label == "ham" for s in samples)},
            "online": evaluation.figures(online, ham_cutoff, spam_cutoff),
            "worst": evaluation.worst(_with_envelopes(online, ham_cutoff, spam_cutoff), ham_cutoff, spam_cutoff),
            "cutoffs": {"ham": ham_cutoff, "spam": spam_cutoff},
            "tokens_version": model.tokens_version,
        }
        if before is not False and is_stale(before):  # the model it replaces was of another tokenizer
            result["recounted_from_version"] = before
        if dry_run:
            result["written"] = []
            return result
        if progress:
            progress("writing the model", total, total)
        written = []
        if unchanged:
            model.trained_at = ended[0].trained_at
        else:
            model.save(path)
            written.append(path.name)
            kept.keep_stream(SCORE_STAMP, ((o.sample.key, o.sample.label, o.sample.source, o.probability,
                                            o.strength) for o in takewhile(lambda o: o.sample.source is not None,
                                                                           online)), model.trained_at)
    finally:
        kept.close()
        if collecting:
            gc.enable()
    write_evaluation(data, result)
    result["written"] = [*written, evaluation_path(data).name]
    return result


def write_evaluation(data: Path, result: dict[str, Any]) -> None:
    path = evaluation_path(data)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        json.dump(result, out)
    os.replace(temporary, path)


def read_evaluation(data: Path) -> dict[str, Any] | None:
    try:
        return json.loads(evaluation_path(data).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
