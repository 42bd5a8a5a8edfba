"""The composite GitHub Action (action.yml), run end to end on this machine: its shell steps in the bash GitHub
runs them with, with the environment a pull_request workflow gives, the env expressions evaluated, and a fake `gh`
that keeps the pull request's comments in a file (it pages them and applies --jq with the real jq, as gh does).
The setup-python step is the runner's; the install step runs against a fake `python` that records what it would
install, and the rest use the curvedoc of this interpreter."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
STEPS = ACTION["runs"]["steps"]
MARKER = "<!-- curvedoc -->"
FAILING = "fixtures/corpus/nan_inf/fp16_overflow"
WARNINGS = "fixtures/corpus/overfitting/digits_long_3k"
HEALTHY = "fixtures/tensorboard/pytorch/healthy"
TOKEN = "ghs_fake_token"
REPOSITORY = "octo/project"
PR_NUMBER = 17
EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")
# What `shell: bash` runs a step with on a GitHub runner.
BASH = ["bash", "--noprofile", "--norc", "-eo", "pipefail"]

pytestmark = pytest.mark.skipif(not shutil.which("jq"), reason="the fake gh applies --jq with jq")

FAKE_GH = r'''
import json, os, subprocess, sys
from pathlib import Path

state_file = Path(os.environ["FAKE_GH_STATE"])
state = json.loads(state_file.read_text())
args = sys.argv[1:]
state["calls"].append(args)
state_file.write_text(json.dumps(state))
if os.environ.get("GH_TOKEN") != state["token"]:
    sys.exit("gh: set the GH_TOKEN environment variable")
if state["read_only"]:
    sys.exit("gh: Resource not accessible by integration (HTTP 403)")
assert args[0] == "api", args
method, paginate, payload, jq, endpoint = "GET", False, None, None, None
rest = iter(args[1:])
for arg in rest:
    if arg == "--method":
        method = next(rest)
    elif arg == "--input":
        payload = json.loads(Path(next(rest)).read_text(encoding="utf-8"))
    elif arg == "--jq":
        jq = next(rest)
    elif arg == "--paginate":
        paginate = True
    else:
        endpoint = arg
parts = endpoint.split("/")
if method == "GET" and parts[3:] == ["issues", str(state["number"]), "comments"]:
    pages = [state["comments"][i:i + 1] for i in range(len(state["comments"]))] or [[]]
    for page in pages if paginate else pages[:1]:
        text = json.dumps(page)
        if jq:
            text = subprocess.run(["jq", "-r", jq], input=text, capture_output=True, text=True, check=True).stdout
        sys.stdout.write(text)
elif method == "POST" and parts[3:] == ["issues", str(state["number"]), "comments"]:
    state["next_id"] += 1
    state["comments"].append({"id": state["next_id"], "body": payload["body"], "user": {"login": "bot"}})
elif method == "PATCH" and parts[3:5] == ["issues", "comments"]:
    (found,) = [c for c in state["comments"] if str(c["id"]) == parts[5]]
    found["body"] = payload["body"]
else:
    sys.exit(f"gh: unexpected {method} {endpoint}")
state["calls"][-1] = [method, endpoint]
state_file.write_text(json.dumps(state))
'''


class Runner:
    """A job that uses the action: the fake pull request's state lives on between runs, as on GitHub."""

    def __init__(self, tmp_path: Path):
        self.tmp = tmp_path
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        gh = self.bin / "gh"
        gh.write_text(f"#!{sys.executable}\n{FAKE_GH}")
        gh.chmod(0o755)
        self.state_file = tmp_path / "gh-state.json"
        self.state = {"token": TOKEN, "read_only": False, "number": PR_NUMBER, "next_id": 1000, "calls": [],
                      "comments": [{"id": 1, "body": "LGTM, but the loss looks odd", "user": {"login": "reviewer"}}]}
        self.save()
        self.event = tmp_path / "event.json"
        self.event.write_text(json.dumps({"action": "synchronize", "number": PR_NUMBER,
                                          "pull_request": {"number": PR_NUMBER}}))

    def save(self):
        self.state_file.write_text(json.dumps(self.state))

    def load(self):
        self.state = json.loads(self.state_file.read_text())
        return self.state

    def run(self, event: str = "pull_request", **given):
        """Every step in order, as the runner would: stops at the first that fails. Returns (status, stdout)."""
        inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
        inputs.update({name.replace("_", "-"): value for name, value in given.items()})
        missing = [name for name, spec in ACTION["inputs"].items() if spec.get("required") and not inputs[name]]
        assert not missing, f"required inputs missing: {missing}"
        self.load()
        self.state["calls"] = []
        self.save()
        context = {"github.token": TOKEN, **{f"inputs.{name}": value for name, value in inputs.items()}}
        temp = self.tmp / "runner-temp"
        temp.mkdir(exist_ok=True)
        base = {
            **os.environ,
            "PATH": os.pathsep.join([str(self.bin), str(Path(sys.executable).parent), os.environ["PATH"]]),
            "FAKE_GH_STATE": str(self.state_file),
            "GITHUB_ACTIONS": "true", "CI": "true",
            "GITHUB_ACTION_PATH": str(ROOT), "GITHUB_WORKSPACE": str(ROOT),
            "GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": str(self.event),
            "GITHUB_REPOSITORY": REPOSITORY, "RUNNER_TEMP": str(temp),
            "GITHUB_STEP_SUMMARY": str(self.tmp / "step-summary.md"),
        }
        base.pop("GH_TOKEN", None)
        base.pop("GITHUB_TOKEN", None)
        stdout = []
        for index, step in enumerate(STEPS):
            if "uses" in step:
                continue
            output = self.tmp / f"output-{index}"
            output.write_text("")
            env = {**base, "GITHUB_OUTPUT": str(output)}
            env.update({name: evaluate(value, context) for name, value in step.get("env", {}).items()})
            script = self.tmp / f"step-{index}.sh"
            script.write_text(step["run"])
            if step.get("name") == "Install curvedoc":
                env["PATH"] = os.pathsep.join([str(recording_python(self.tmp)), env["PATH"]])
            done = subprocess.run([*BASH, str(script)], env=env, cwd=ROOT, capture_output=True, text=True,
                                  timeout=120)
            stdout.append(done.stdout)
            if "id" in step:
                for line in output.read_text().splitlines():
                    name, _, value = line.partition("=")
                    context[f"steps.{step['id']}.outputs.{name}"] = value
            if done.returncode:
                return done.returncode, "".join(stdout)
        return 0, "".join(stdout)


def evaluate(value, context) -> str:
    """The ${{ name }} expressions the action uses; anything else fails the test, so that a new expression is
    looked at here before it ships untested."""
    return EXPRESSION.sub(lambda match: context[match.group(1)], str(value))


def recording_python(tmp: Path) -> Path:
    folder = tmp / "python-recorder"
    if not folder.exists():
        folder.mkdir()
        python = folder / "python"
        python.write_text(f"#!{sys.executable}\nimport json, sys\n"
                          f"open({str(tmp / 'pip-args.json')!r}, 'w').write(json.dumps(sys.argv[1:]))\n")
        python.chmod(0o755)
    return folder


@pytest.fixture
def runner(tmp_path):
    return Runner(tmp_path)


def ours(state):
    return [comment for comment in state["comments"] if comment["body"].startswith(MARKER)]


def test_a_failing_run_gets_one_sticky_comment_annotations_and_a_failed_job(runner, tmp_path):
    status, stdout = runner.run(paths=FAILING)
    assert status == 1
    state = runner.load()
    assert [call[0] for call in state["calls"]] == ["GET", "POST"]
    (comment,) = ours(state)
    report = (tmp_path / "runner-temp" / "curvedoc.md").read_text()
    assert comment["body"] == f"{MARKER}\n{report}"
    assert "fp16\\_overflow" in report and "CD101" in report
    assert (tmp_path / "step-summary.md").read_text() == report
    annotations = [line for line in stdout.splitlines() if line.startswith("::")]
    assert annotations and all(line.startswith(f"::error file={FAILING}/events.out.tfevents.") or
                               line.startswith(f"::warning file={FAILING}/") for line in annotations)
    assert any(",title=CD101 nonfinite-loss::" in line for line in annotations)

    status, _ = runner.run(paths=FAILING)
    assert status == 1
    state = runner.load()
    assert [call[0] for call in state["calls"]] == ["GET", "PATCH"]
    assert state["calls"][1][1] == f"repos/{REPOSITORY}/issues/comments/{comment['id']}"
    assert [c["id"] for c in ours(state)] == [comment["id"]]
    assert state["comments"][0]["body"] == "LGTM, but the loss looks odd"


def test_the_comment_is_found_beyond_the_first_page(runner):
    runner.state["comments"] += [{"id": 2 + i, "body": f"comment {i}", "user": {"login": "reviewer"}}
                                 for i in range(3)]
    runner.state["comments"].append({"id": 9, "body": f"{MARKER}\nan old report", "user": {"login": "bot"}})
    runner.save()
    runner.run(paths=HEALTHY)
    state = runner.load()
    assert [call[0] for call in state["calls"]] == ["GET", "PATCH"]
    assert len(state["comments"]) == 5 and ours(state)[0]["id"] == 9
    assert "an old report" not in ours(state)[0]["body"]


@pytest.mark.parametrize(("paths", "fail_on", "expected"), [
    (FAILING, "error", 1),
    (FAILING, "never", 0),
    (WARNINGS, "error", 0),
    (WARNINGS, "warning", 1),
    (HEALTHY, "error", 0),
    (f"{HEALTHY} fixtures/does-not-exist", "error", 2),
])
def test_the_job_fails_as_fail_on_says(runner, paths, fail_on, expected):
    status, _ = runner.run(paths=paths, fail_on=fail_on)
    assert status == expected


@pytest.mark.parametrize(("event", "comment"), [("push", "true"), ("pull_request", "false")])
def test_no_comment_outside_a_pull_request_or_when_switched_off(runner, event, comment):
    status, stdout = runner.run(event=event, paths=FAILING, comment=comment)
    assert status == 1 and "::error file=" in stdout
    assert runner.load()["calls"] == []


def test_a_read_only_token_warns_and_the_job_still_fails_on_findings(runner):
    runner.state["read_only"] = True
    runner.save()
    status, stdout = runner.run(paths=FAILING)
    assert status == 1
    assert "::warning title=curvedoc::could not comment on the pull request" in stdout


def test_unusable_paths_exit_2_without_an_empty_comment(runner):
    status, _ = runner.run(paths="fixtures/does-not-exist")
    assert status == 2
    assert runner.load()["calls"] == []


def test_inputs_are_data_never_shell_code(runner, tmp_path):
    pwned = tmp_path / "pwned"
    status, _ = runner.run(paths=f"{HEALTHY} $(touch {pwned}) `touch {pwned}`", args=f"; touch {pwned}")
    assert not pwned.exists()
    assert status == 2  # the would-be commands arrive as paths and arguments, which curvedoc refuses
    for step in STEPS:
        assert "${{" not in step.get("run", ""), f"{step.get('name')}: an expression inside a script"


def test_the_action_installs_curvedoc_from_its_own_checkout(runner, tmp_path):
    runner.run(paths=HEALTHY)
    args = json.loads((tmp_path / "pip-args.json").read_text())
    assert args[:3] == ["-m", "pip", "install"] and args[-1] == str(ROOT)
    assert not [arg for arg in args[3:] if not arg.startswith("-") and arg != str(ROOT)]
    (setup,) = [step for step in STEPS if "uses" in step]
    assert setup["uses"].startswith("actions/setup-python@")
    assert setup["with"]["python-version"] == "${{ inputs.python-version }}"
    assert ACTION["runs"]["using"] == "composite"
    assert {name for name, spec in ACTION["inputs"].items() if spec.get("required")} == {"paths"}
    assert {name: spec.get("default") for name, spec in ACTION["inputs"].items()} == {
        "paths": None, "fail-on": "error", "comment": "true", "python-version": "3.11", "args": ""}
