"""How long the masks take on a 2 KB text: run by hand, `.venv/bin/python bench/bench_masks.py [--help]`.

Prints the median time of one call over many batches, for mask and mask_secrets, on ordinary prose (with and
without numbers and a plain link, in English, in French with typographic signs, in a chat with emoji), on a
code message and on a text with numbers and keys to mask. Every text is brought to 2 KB with more ordinary
prose. All the data is invented (check digits computed here). Targets: under 30 µs for ordinary prose,
under 200 µs for a code message. Then a few long texts of one repeated shape (linear time expected), and
the module's import time.

`--against REV` also loads the masks as they were at a git revision (say `main`, or the commit before a
change) and times both side by side in one run, their batches interleaved so that a busy machine slows
both alike: `.venv/bin/python bench/bench_masks.py --against main`. On a machine shared with other work,
`--cpu` counts the CPU time of this thread instead of the time on the clock: what others run then weighs
far less on the figures.
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.machinery
import importlib.util
import statistics
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway.privacy import masks as current_masks  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SIZE = 2048

PROSE = (
    "Dear neighbours, the committee met on Tuesday evening to talk over the plans for the new library "
    "building, and several of you asked for a summary, so here it is. The architect showed three rough "
    "sketches: a long low hall facing the garden, a taller building on the corner of the square, and a "
    "smaller extension of the old reading room. Most members liked the first one, because it keeps the "
    "lime trees and lets the afternoon light into the children's corner, but the treasurer reminded us "
    "that it is also the most expensive, and that the town has not yet said how much it will give.\n\n"
    "Questions came from every side. Where will the bicycles go? Can the café stay open when the library "
    "is closed? Who looks after the garden once the builders have left? The chair promised a written "
    "answer before the next meeting, and asked the volunteers to keep the old room open in the meantime. "
    "Attendance has grown steadily through the autumn, and the evening readings for children are full "
    "most weeks, which is a good argument when we speak to the council.\n\n"
    "Some of you would rather see the garden stay exactly as it is; others would like long tables under "
    "the trees where students can work late in summer. Nobody has decided anything yet, and the architect "
    "is waiting for a clear brief before she draws more than sketches. If you have an opinion, now is the "
    "time to give it: write to the committee, or come to the open afternoon at the reading room, where "
    "the drawings will be pinned on the wall with paper and pencils beside them for your remarks.\n\n"
    "Finally, a word of thanks to everyone who carried books, painted shelves and baked cakes this year. "
    "The library exists because people give their evenings to it, and the new building will only be "
    "worth its cost if it stays that kind of place. With warm regards from the whole committee, Jane."
)
PROSE_WITH_NUMBERS = (
    "Hi Jane,\n\nThanks for the notes from Tuesday. We meet again on March 12, 2026 at 10:30 in room 4, "
    "and the draft is on https://example.org/blog/library-plans if you want to read it first. The budget "
    "line went from 120 to 145 thousand euros, about 20% more, mostly because of the roof and the new "
    "windows on the north side. Could you bring 3 printed copies? The chair wants everyone to have read "
    "pages 12 to 18 before we start, and she asked whether the garden could stay as it is.\n\n"
    "About the garden: the gardeners counted 14 lime trees and 2 old pears, and they think 11 of the limes "
    "can stay if the hall is built 6 metres further back. That costs roughly 9,500 euros more in "
    "foundations, which the treasurer says we can find if the café pays a little more rent. Some members "
    "would rather see long tables under the trees, others a quiet lawn; we will vote on it in April.\n\n"
    "The volunteers kept the old reading room open 5 days a week through the autumn, and attendance grew "
    "from about 40 to 65 visitors a day. The evening readings for children are full most weeks, with 25 "
    "places and a waiting list, which is a good argument when we speak to the council on the 20th.\n\n"
    "Two small things before I forget. The printer in the office jams on anything heavier than 90 g "
    "paper, so please use the copy shop on the square for the drawings. And the key to the back door is "
    "now with Paul, not with me; he is there most mornings between 9 and 11.\n\n"
    "See you on the 12th, and thanks again for all the work on the summary. Best wishes, Tom"
)
CODE_MESSAGE = (
    "Subject: 482913 is your Example verification code\n\n"
    "Hello Jane,\n\nSomeone (hopefully you) asked to sign in to your Example account from a new "
    "device on Mon, 12 Jan 2026 at 09:41. To finish signing in, enter this verification code:\n\n"
    "482 913\n\n"
    "| 4 | 8 | 2 | 9 | 1 | 3 |\n\n"
    "The code expires in 10 minutes. Never share it with anyone, not even with us: Example staff will "
    "never ask you for it, by mail, by phone or in a chat. If someone asks, it is a scam.\n\n"
    "You can also sign in at once with this link, which works only once and only on the device that asked:\n"
    "https://accounts.example.com/login/verify?token=Zx81kQpLr7TmWv2Ns4Yb&device=Qm9vb2s\n\n"
    "Didn't ask for this? Your password is still safe, but someone may know it. Change it from your "
    "account settings and turn on two-step verification: https://example.com/help/security explains "
    "how, step by step. You can also call our support team at +33 6 12 34 56 78, every day from 8:00 "
    "to 20:00, or write to the address below.\n\n"
    "Why am I getting this? We send a code each time your account is used on a device we have not seen "
    "before, or after you reset your browser. It is one of the ways we keep your files, your messages "
    "and your payment details out of other people's hands. You can read more about how we protect your "
    "account at https://example.com/help/account-protection, and choose which alerts you receive at "
    "https://example.com/settings/notifications.\n\n"
    "Thanks for using Example,\nThe Example team\n\n"
    "> On 12 Jan 2026, Example wrote:\n> Your previous code was 771 204\n\n"
)
FRENCH_PROSE = (
    "Bonjour à tous, le comité s’est réuni mardi soir pour parler des plans de la nouvelle bibliothèque. "
    "L’architecte a montré trois esquisses : une longue salle basse face au jardin, un bâtiment plus haut à "
    "l’angle de la place, et une petite extension de l’ancienne salle de lecture. « C’est la première qui "
    "garde les tilleuls », a rappelé la trésorière — mais c’est aussi la plus chère, environ 145 000 € de "
    "plus, et la mairie n’a pas encore dit combien elle donnerait… Rendez-vous le 12 mars à 18 h 30, "
    "salle 204, pour en reparler ; apportez vos idées, vos questions et, pourquoi pas, un gâteau.\n\n"
)
CHAT_WITH_EMOJI = (
    "jane: morning 👋 did the deploy go out?\ntom: yes 🎉 at 09:41, all green ✅\njane: great 🙌 the "
    "dashboard still shows 3 errors from last night though 🤔\ntom: those are the old ones, I'll clear "
    "them ☕️ first\njane: 👍 and the meeting moved to 14:00, room 4\ntom: ok 🙂 see you there\n"
)
CODE_FOOTER = "\n\n© 2026 Example Inc., 12 rue de la Paix, 75002 Paris. Sent on Mon, 12 Jan 2026 at 09:41.\n"
# A programmer's session: "code" on every other line, numbers beside it, nothing to mask.
PROGRAMMING_CHAT = (
    "user: the code in parser.py fails at line 1234 since this morning, exit code 2; can you look?\n"
    "assistant: The code reads the whole file before it checks the header, so a 4096-byte header is cut. "
    "Error code 4040 comes from the server when the upload is retried; the status code 503 is the proxy.\n"
    "user: ok, and the source code of the uploader? version 2.14.1, released on 2026-03-12.\n"
    "assistant: Its code is fine: the retry waits 1500 ms, then 3000 ms. The test at line 88 of "
    "test_upload.py expects 3 tries; the code review asked for 5. Advent of Code 2023 used the same trick.\n"
)


def invented_iban(country: str, bban: str) -> str:
    number = int("".join(str(int(ch, 36)) for ch in bban + country + "00"))
    return f"{country}{98 - number % 97:02d}{bban}"


def invented_card(body: str) -> str:
    """`body` and the digit that completes Luhn's check."""
    for last in "0123456789":
        digits = [int(ch) for ch in body + last]
        total = sum(
            d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(reversed(digits))
        )
        if total % 10 == 0:
            return body + last
    raise AssertionError("unreachable")


def invented_nir(body: str) -> str:
    return f"{body}{97 - int(body) % 97:02d}"


IBAN = invented_iban("FR", "14508059410452736918254")
CARD = invented_card("453201511283036")
NIR = invented_nir("1930749123058")
SECRETS = (
    f"Please transfer the deposit to {' '.join(IBAN[i : i + 4] for i in range(0, len(IBAN), 4))} before "
    f"Friday; the card on file is {' '.join(CARD[i : i + 4] for i in range(0, 16, 4))} and my social "
    f"security number is {NIR[0]} {NIR[1:3]} {NIR[3:5]} {NIR[5:7]} {NIR[7:10]} {NIR[10:13]} {NIR[13:]}. "
    "The deploy uses ghp_Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2 and AKIAEXAMPLE7Q2W3E4R5, password=hunter2!. "
)


def sized(text: str, footer: str = "") -> str:
    """`text` made up to SIZE characters with ordinary prose (nothing to mask), the footer kept at the end."""
    padded = text + "\n\n" + PROSE * 2
    return padded[: SIZE - len(footer)] + footer


def median_microseconds(
    functions: list[Callable[[str], str]],
    text: str,
    batches: int = 300,
    calls: int = 50,
    clock: Callable[[], int] = time.perf_counter_ns,
) -> list[float]:
    """The median time of one call of each function, their batches interleaved (`clock`: nanoseconds)."""
    for function in functions:
        for _ in range(calls):  # warm up
            function(text)
    timings: list[list[float]] = [[] for _ in functions]
    for _ in range(batches):
        for function, found in zip(functions, timings, strict=True):
            started = clock()
            for _ in range(calls):
                function(text)
            found.append((clock() - started) / calls / 1000)
    return [statistics.median(found) for found in timings]


class _SourceLoader(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports `package.X` from sources held in memory."""

    def __init__(self, package: str, sources: dict[str, str]) -> None:
        self.package, self.sources = package, sources

    def find_spec(self, name: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        prefix, _, stem = name.rpartition(".")
        if prefix == self.package and stem in self.sources:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: Any) -> None:
        stem = module.__name__.rpartition(".")[2]
        exec(compile(self.sources[stem], f"{self.package}/{stem}.py", "exec"), module.__dict__)


def masks_at(revision: str) -> Any:
    """The masks module as it was at a git revision, imported beside today's under another name."""
    listing = subprocess.check_output(
        ["git", "-C", str(ROOT), "ls-tree", "--name-only", revision, "gateway/privacy/"], text=True
    ).split()
    package = "masks_at_" + "".join(ch if ch.isalnum() else "_" for ch in revision)
    sources = {
        Path(path).stem: subprocess.check_output(
            ["git", "-C", str(ROOT), "show", f"{revision}:{path}"], text=True
        ).replace("gateway.privacy", package)
        for path in listing
        if path.endswith(".py") and not path.endswith("__init__.py")
    }
    module = types.ModuleType(package)
    module.__path__ = []
    sys.modules[package] = module
    sys.meta_path.insert(0, _SourceLoader(package, sources))
    return importlib.import_module(package + ".masks")


# Long texts of one repeated shape, where a careless pattern would take quadratic time.
WORST_SHAPES = {
    "digit groups": "1 " * 50_000,
    "settings": "password=" * 11_000,
    "link-like pieces": ".ab/" * 25_000,
    "capitals and digits": "AB12 " * 20_000,
    "code words, months and years": "your code is March 2026 " * 4_000,
}


def milliseconds_once(function: Callable[[str], str], text: str, runs: int = 5) -> float:
    timings = []
    for _ in range(runs):
        started = time.perf_counter_ns()
        function(text)
        timings.append((time.perf_counter_ns() - started) / 1e6)
    return statistics.median(timings)


def import_milliseconds() -> float:
    """What importing the masks costs (their patterns are compiled then), in fresh interpreters.

    The modules of gateway/privacy are compiled to bytecode before the clock starts, as an installed
    package has them cached; the gateway package around them is not imported (empty packages stand in
    for `gateway` and `gateway.privacy`), its cost is not the masks'. The garbage left by compiling is
    collected first, so that the collector does not charge it to the import.
    """
    folder = Path(__file__).resolve().parent.parent / "gateway" / "privacy"
    code = (
        "import gc, importlib.abc, importlib.util, pathlib, re, sys, time, types\n"
        "folder = pathlib.Path(sys.argv[1])\n"
        "for name, path in (('gateway', folder.parent), ('gateway.privacy', folder)):\n"
        "    package = sys.modules[name] = types.ModuleType(name)\n"
        "    package.__path__ = [str(path)]\n"
        "codes = {\n"
        "    'gateway.privacy.' + path.stem: compile(path.read_text(encoding='utf-8'), str(path), 'exec')\n"
        "    for path in folder.glob('*.py') if path.stem != '__init__'\n"
        "}\n"
        "class Compiled(importlib.abc.MetaPathFinder, importlib.abc.Loader):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        return importlib.util.spec_from_loader(name, self) if name in codes else None\n"
        "    def create_module(self, spec):\n"
        "        return None\n"
        "    def exec_module(self, module):\n"
        "        exec(codes[module.__name__], module.__dict__)\n"
        "sys.meta_path.insert(0, Compiled())\n"
        "gc.collect()\n"
        "started = time.perf_counter()\n"
        "import gateway.privacy.masks\n"
        "print((time.perf_counter() - started) * 1000)\n"
    )
    runs = [float(subprocess.check_output([sys.executable, "-c", code, str(folder)])) for _ in range(7)]
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(
        description="How long mask() and mask_secrets() take on 2 KB texts (median µs per call).",
        epilog="Run by hand; timings never go in tests.",
    )
    parser.add_argument(
        "--against", metavar="REV", help="also time the masks of this git revision, side by side (e.g. main)"
    )
    parser.add_argument("--batches", type=int, default=300, help="batches per figure (default: 300)")
    parser.add_argument("--calls", type=int, default=50, help="calls per batch (default: 50)")
    parser.add_argument("--quick", action="store_true", help="only the 2 KB texts: no long texts, no import time")
    parser.add_argument(
        "--cpu", action="store_true", help="count this thread's CPU time, not the clock's (a machine shared with others)"
    )
    options = parser.parse_args()

    versions = [("now", current_masks)]
    if options.against:
        versions.insert(0, (options.against[:10], masks_at(options.against)))
    texts = {
        "prose, nothing to mask": sized(PROSE),
        "prose with numbers and a plain link": sized(PROSE_WITH_NUMBERS),
        "french prose, typographic signs": sized(FRENCH_PROSE * 4),
        "chat with emoji": sized(CHAT_WITH_EMOJI * 6),
        "code message": sized(CODE_MESSAGE, CODE_FOOTER),
        "numbers and keys to mask": sized(SECRETS),
        "a programmer's chat naming code": sized(PROGRAMMING_CHAT * 3),
    }
    clock = time.thread_time_ns if options.cpu else time.perf_counter_ns
    columns = [f"{name} {label}" for name in ("mask", "mask_secrets") for label, _ in versions]
    print(f"{'text (2 KB), µs per call' + (' (CPU)' if options.cpu else ''):40}" + "".join(f"{column:>22}" for column in columns))
    for label, text in texts.items():
        figures = median_microseconds(
            [module.mask for _, module in versions], text, options.batches, options.calls, clock
        ) + median_microseconds(
            [module.mask_secrets for _, module in versions], text, options.batches, options.calls, clock
        )
        print(f"{label:40}" + "".join(f"{figure:19.1f} µs" for figure in figures))
    if options.quick:
        return
    print(f"\n{'about 100 KB of one shape (now)':40} {'mask':>10} {'mask_secrets':>14}")
    for label, text in WORST_SHAPES.items():
        print(
            f"{label:40} {milliseconds_once(current_masks.mask, text):8.1f} ms"
            f" {milliseconds_once(current_masks.mask_secrets, text):10.1f} ms"
        )
    print(
        f"\nimport of the masks (gateway/privacy/masks.py and the modules it imports): "
        f"{import_milliseconds():.1f} ms (median of 7 fresh interpreters)"
    )


if __name__ == "__main__":
    main()
