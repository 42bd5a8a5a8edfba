"""fixtures/public/restore.py: the public logs rebuilt from repository snapshots, checked by blob id."""

import importlib.util
import subprocess
from pathlib import Path

import pytest

RESTORE = Path(__file__).resolve().parent.parent / "fixtures" / "public" / "restore.py"


@pytest.fixture
def restore(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("restore", RESTORE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "MANIFESTS", tmp_path / "manifests")
    return module


def snapshot(mirrors: Path, repository: str, files: dict[str, str]) -> dict[str, str]:
    """A bare git directory holding ``files`` where ``fetch`` puts one; their blob ids by path."""
    work = mirrors.parent / "work" / repository.replace("/", "+")
    work.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    blobs = {}
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
        blobs[path] = subprocess.run(["git", "hash-object", "-w", str(work / path)], cwd=work, check=True,
                                     capture_output=True, text=True).stdout.strip()
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirrors / repository.replace("/", "+") / "repo")],
                   check=True, capture_output=True)
    return blobs


def manifest(folder: Path, name: str, rows: list[tuple[str, str, str]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["repository\tcommit\tpath\tblob\trelative path"]
    lines += [f"{repository}\t0\tx\t{blob}\t{relative}" for repository, blob, relative in rows]
    (folder / f"{name}.tsv").write_text("\n".join(lines) + "\n")


def test_files_come_back_and_a_freed_snapshot_goes_once_they_are_in_place(restore, tmp_path, monkeypatch):
    mirrors, shared = tmp_path / "mirror", tmp_path / "shared"
    blobs = snapshot(mirrors, "someone/run", {"logs/metrics.csv": "epoch,loss\n0,2.3\n1,1.9\n"})
    manifest(tmp_path / "manifests", "wild-x", [("someone/run", blobs["logs/metrics.csv"], "wild-x/run/metrics.csv"),
                                                ("nobody/fetched", "0" * 40, "wild-x/other/log.txt")])
    monkeypatch.setattr("sys.argv", ["restore.py", "--shared", str(shared), "--mirrors", str(mirrors), "--free",
                                     "--fetch-list", str(tmp_path / "todo.txt")])
    assert restore.main() == 1  # one repository is still to fetch
    assert (shared / "wild-x/run/metrics.csv").read_text().startswith("epoch,loss")
    assert not (mirrors / "someone+run").exists()
    assert (tmp_path / "todo.txt").read_text() == "nobody/fetched\n"


def test_the_repositories_to_fetch_come_in_an_order_unrelated_to_their_names(restore):
    names = {f"{owner}{index}/repo" for owner in "0ABCabc" for index in range(20)}
    order = restore.fetch_order(names)
    assert order == restore.fetch_order(set(names))  # a hash of each name, not the set's order: every machine's
    first_tenth = order[: len(order) // 10]
    assert {name[0] for name in first_tenth} != {"0"}  # not the alphabet's first owners
    assert order != sorted(names)
