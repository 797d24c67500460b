"""The compiled spam client from an installed wheel: `gateway spam client` finds its C file inside the installed
package, builds it, and the program falls back on the installed Python command (not this tree's)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from gateway_spam.tokens import stripped, tokens
from spamfilter import classify

from tests.install.test_wheel_and_bundle import installed  # noqa: F401 - the fixture: the wheel, built once a run
from tests.plugins.spam.classify_helpers import CUTOFFS, rule_environment, train_sample

pytestmark = pytest.mark.timeout(900)  # the wheel's environment is made once a run, minutes on a loaded machine


def test_the_installed_gateway_builds_a_client_that_answers_and_falls_back_on_itself(
        installed: Path, gateway_home: Path) -> None:  # noqa: F811
    data, files, model = train_sample(gateway_home)
    environment = rule_environment(gateway_home)
    done = subprocess.run([str(installed / "gateway"), "spam", "client"], env=environment, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    client = Path(done.stdout.strip())
    assert client.parent == data
    assert str(installed.parent).encode() in client.read_bytes()  # its fallback is the installed Python command
    expected = []
    for path in files[:3]:
        score = model.score(tokens(stripped(path.read_bytes())))
        line = f"{score.verdict(*CUTOFFS)} {score.probability:.6f}"
        expected.append((classify.EXIT_CODES[line.split()[0]], line + "\n"))
    asked = [str(p) for p in files[:3]]

    def answers() -> list[tuple[int, str]]:
        return [(r.returncode, r.stdout) for r in (subprocess.run([str(client), p], env=environment,
                                                                  capture_output=True, text=True, timeout=120)
                                                   for p in asked)]

    assert answers() == expected  # no classifier: the installed command judged each itself
    served = subprocess.Popen([str(installed / "gateway-spam-classify"), "--serve"], env=environment,
                              stderr=subprocess.PIPE, text=True)
    try:
        assert "listening on" in served.stderr.readline()
        assert answers() == expected
    finally:
        served.terminate()
        served.wait(timeout=30)

