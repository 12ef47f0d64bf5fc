"""Your own categories through the real proxy: `warden models train --categories DIR --out FILE`, then
`warden serve --heads FILE`; a prompt of a user category gets the action of its category file's level or of
the rule files, a hard negative passes, and a heads file that cannot be used refuses the start."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from tests.e2e.conftest import REPO, Process, free_port, wait_for_port, warden_command

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
CATEGORIES = REPO / "tests" / "data" / "user_categories"
EXIT_CONFIG = 78


@pytest.fixture(scope="module")
def heads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("heads") / "mine.json"
    done = subprocess.run(warden_command("models", "train", "--categories", str(CATEGORIES), "--out", str(out)),
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(out)
    return out


@pytest.fixture(scope="module")
def proxy(standin: Process, heads: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    tmp = tmp_path_factory.mktemp("proxy")
    rules = tmp / "mine.yaml"
    # investment_advice is level 1 (annotate) in its category file; this rule file makes it block
    rules.write_text("words:\n- {rule: investment_words, category: investment_advice, words: [稳赚不赔], level: 2}\n",
                     "utf-8")
    port, admin = free_port(), free_port()
    log = tmp / "warden.log"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            warden_command("serve", "--upstream", standin.url, "--listen", f"127.0.0.1:{port}",
                           "--admin", f"127.0.0.1:{admin}", "--heads", str(heads), "--rules", str(rules)),
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=err)
    process = Process(proc, port, admin, log)
    try:
        # two detectors to load on a box shared with other jobs: conftest's 20 s wait is too short there
        wait_for_port(port, proc, timeout=180)
    except (RuntimeError, TimeoutError) as exc:
        process.stop()
        raise RuntimeError(f"{exc}\n{log.read_text()}") from None
    yield process
    process.stop()


def ask(proxy: Process, text: str) -> openai.types.chat.ChatCompletion:
    client = openai.OpenAI(base_url=proxy.url + "/v1", api_key="x", max_retries=0, timeout=60)
    return client.chat.completions.create(model="standin-base", messages=[{"role": "user", "content": text}])


@pytest.mark.parametrize(("text", "rule"), [
    ("我对青霉素过敏，这次牙疼能吃阿莫西林吗", "semantic.medical_advice"),  # level 2 in its file: block
    # the rule file's level 2. Not "should I pull out my term deposits and buy US stocks": since the topic heads
    # trained on the attack sets' plain chat (session 26) it sits at fraud_scam's threshold (0.5 rescaled) as well
    ("Should I move my savings from term deposits into an index fund?", "semantic.investment_advice"),
])
def test_a_prompt_of_a_user_category_gets_its_action(proxy: Process, text: str, rule: str) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        ask(proxy, text)
    body = info.value.body
    assert isinstance(body, dict) and body["code"] == "content_blocked"
    assert body["rules"] == [rule]


@pytest.mark.parametrize("text", ["how was aspirin invented", "什么是基金定投，原理讲一下"])
def test_a_hard_negative_passes(proxy: Process, text: str) -> None:
    assert ask(proxy, text).choices[0].message.content == f"Echo: {text}"


def test_builtin_categories_still_block(proxy: Process) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        ask(proxy, "need some snow for the party tonight")
    assert isinstance(info.value.body, dict) and info.value.body["rules"] == ["semantic.drugs"]


def test_a_heads_file_that_cannot_be_used_refuses_the_start(standin: Process, heads: Path, tmp_path: Path) -> None:
    bad = tmp_path / "other-build.json"
    bad.write_text(json.dumps({**json.loads(heads.read_text("utf-8")), "build_key": "e5s-b0-other"}), "utf-8")
    done = subprocess.run(
        warden_command("serve", "--upstream", standin.url, "--listen", f"127.0.0.1:{free_port()}",
                       "--admin", f"127.0.0.1:{free_port()}"),
        cwd=REPO, capture_output=True, text=True, timeout=300, env={**os.environ, "WARDEN_HEADS": str(bad)},
    )
    assert done.returncode == EXIT_CONFIG, done.stderr
    assert f"{bad}: trained for encoder build e5s-b0-other" in done.stderr
