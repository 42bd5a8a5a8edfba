"""`curvedoc audit --dask`: the per-run work on a real Dask cluster (a LocalCluster on loopback) gives exactly
the local result."""

import shutil
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed", reason="the dask extra (curvedoc[dask]) is not installed")

from curvedoc.audit import audit  # noqa: E402
from curvedoc.cli import main  # noqa: E402
from curvedoc.errors import CurvedocError  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as local:
        yield local


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    root = tmp_path_factory.mktemp("dask") / "archive"
    shutil.copytree(FIXTURES / "corpus" / "healthy", root / "healthy")
    shutil.copytree(FIXTURES / "corpus" / "nan_inf", root / "nan_inf")
    shutil.copytree(FIXTURES / "csv" / "broken", root / "broken")
    return root


def test_a_dask_audit_equals_the_local_audit(cluster, archive):
    local = audit([archive], jobs=1, cache=False)
    remote = audit([archive], dask=cluster.scheduler_address, cache=False)
    assert [s.to_dict() for s in remote.runs] == [s.to_dict() for s in local.runs]
    assert remote.unreadable == local.unreadable
    assert remote.cross_run == local.cross_run
    assert remote.n_analysed == local.n_analysed > 20


def test_the_dask_command_line_prints_the_same_index(cluster, archive, capsys):
    local_code = main(["audit", str(archive), "--no-cache", "-j", "1", "--format", "json"])
    local = capsys.readouterr().out
    dask_code = main(["audit", str(archive), "--no-cache", "--dask", cluster.scheduler_address, "--format", "json"])
    assert capsys.readouterr().out == local
    assert dask_code == local_code == 1


def test_an_unreachable_scheduler_is_a_one_line_error(archive, monkeypatch, capsys):
    import curvedoc.audit.engine as engine

    monkeypatch.setattr(engine, "DASK_CONNECT_TIMEOUT", "1s")
    with pytest.raises(CurvedocError, match="cannot reach the Dask scheduler"):
        audit([archive], dask="tcp://127.0.0.1:1", cache=False)
    assert main(["audit", str(archive), "--no-cache", "--dask", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot reach the Dask scheduler" in err
