"""The first command after installing or updating says that it compiles, and for about
how long, instead of being silent for minutes (issue 21); later commands say nothing."""
from __future__ import annotations

from armdyn.core import cli
from armdyn.core.kernels import cache


def test_an_empty_cache_is_cold_and_a_filled_one_is_not(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert cache.cache_is_cold()
    (tmp_path / "kernels_0123").mkdir()
    (tmp_path / "kernels_0123" / "denoc.rnea-42.py311.nbi").write_bytes(b"index")
    assert not cache.cache_is_cold()


def test_the_cli_says_it_compiles_before_the_first_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli, "cache_is_cold", lambda: True)
    code = cli.main(["simulate", str(tmp_path / "missing.toml"), "-o", str(tmp_path / "a.csv")])
    err = capsys.readouterr().err.splitlines()
    assert code == 2
    assert err[0].startswith("armdyn: first run of this version: compiling the dynamics kernels")
    assert cache.FIRST_COMPILE_TIME in err[0] and "minutes" in err[0]


def test_a_warm_cache_and_a_usage_error_say_nothing_of_compiling(tmp_path, monkeypatch,
                                                                  capsys):
    monkeypatch.setattr(cli, "cache_is_cold", lambda: False)
    cli.main(["simulate", str(tmp_path / "missing.toml"), "-o", str(tmp_path / "a.csv")])
    assert "compiling" not in capsys.readouterr().err
    monkeypatch.setattr(cli, "cache_is_cold", lambda: True)
    assert cli.main(["simulate", "fourbar", "--dt", "0"]) == 2  # refused before any work
    assert "compiling" not in capsys.readouterr().err
