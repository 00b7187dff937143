"""The user documentation (README.md, docs/*.md) stays true.

- every ```python block runs (a fresh namespace, the repository's root as the working
  directory) without raising and without leaving files in the repository; a block
  whose first line is a comment starting with `# not run` is skipped (keep those rare);
- every relative link and image resolves to a file (and a `#fragment` to a heading),
  and every repository path a page names (`core/cli.py`, `robots/fourbar.toml`)
  exists;
- every option an `armdyn` command line in the docs uses, and every option
  docs/cli.md names, exists in the parser's --help output, and docs/cli.md names
  every option --help lists;
- every `armdyn [sweep] inverse|simulate robots/...` example of docs/cli.md runs (in process,
  its output in a temporary folder) with status 0, or non-zero where the page shows it
  failing (a line starting with `$ ` followed by an `armdyn:` message).
"""
from __future__ import annotations

import glob
import io
import os
import re
import shlex
import tempfile
from contextlib import redirect_stdout
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
CLI_PAGE = ROOT / "docs" / "cli.md"
SKIP_MARK = "# not run"

#: A fenced code block: its indentation, its info string and its text.
FENCE = re.compile(r"^([ \t]*)```([^\n`]*)\n(.*?)^[ \t]*```[ \t]*$", re.M | re.S)
INLINE_CODE = re.compile(r"(`+)(.+?)\1", re.S)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_SRC = re.compile(r"""<(?:img|a)\b[^>]*?\b(?:src|href)\s*=\s*["']([^"']+)["']""", re.I)
#: A path into the repository: a top-level folder, then a file or folder name.
REPO_PATH = re.compile(r"(?<![\w./~<-])((?:core|gui|robots|tests|docs|scripts|benchmarks|"
                       r"resources)/[\w.*-]+(?:/[\w.*-]+)*)")
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
#: The window ("") and the subcommands whose options the docs are checked against.
COMMANDS = ("", "inverse", "simulate", "identify", "sweep inverse", "sweep simulate")


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _fenced_blocks(text: str):
    """(language, first line number of the code, code) of each fenced block."""
    for m in FENCE.finditer(text):
        indent, info, body = m.group(1), m.group(2).strip(), m.group(3)
        lines = [line[len(indent):] if line.startswith(indent) else line.lstrip()
                 for line in body.splitlines()]
        yield (info.split()[0].lower() if info else ""), _line_of(text, m.start(3)), \
            "\n".join(lines) + "\n"


def _without_code(text: str) -> str:
    """The page with fenced blocks and inline code blanked out (line numbers kept)."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return INLINE_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _code_lines(text: str):
    """Lines of code (fenced and indented blocks), with backslash continuations joined."""
    chunks = [code for _lang, _line, code in _fenced_blocks(text)]
    rest = FENCE.sub("", text).split("\n")
    block: list[str] = []
    for line in rest + [""]:
        if line.startswith("    ") or line.startswith("\t"):
            block.append(line.strip())
        else:
            if block:
                chunks.append("\n".join(block))
            block = []
    for chunk in chunks:
        yield from re.sub(r"\\\n\s*", " ", chunk).splitlines()


# --------------------------------------------------------------------------------------
# (a) Python blocks run
# --------------------------------------------------------------------------------------

def _python_blocks():
    for page in PAGES:
        for lang, line, code in _fenced_blocks(page.read_text(encoding="utf-8")):
            if lang in ("python", "py", "python3"):
                yield pytest.param(code, id=f"{_rel(page)}:{line}",
                                   marks=[pytest.mark.skip(reason=SKIP_MARK)]
                                   if code.lstrip().startswith(SKIP_MARK) else [])


def _repo_listing() -> set[str]:
    """The files a doc example could leave behind: the root and the doc and robot folders."""
    return {_rel(p) for folder in (ROOT, ROOT / "docs", ROOT / "robots")
            for p in folder.iterdir()}


@pytest.mark.parametrize("code", list(_python_blocks()))
def test_python_block_runs(code, monkeypatch, request, tmp_path):
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the examples' mkdtemp()
    before = _repo_listing()
    name = request.node.callspec.id
    exec(compile(code, name, "exec"), {"__name__": "__docs__"})
    left = _repo_listing() - before
    assert not left, f"{name} left files in the repository: {sorted(left)}"


def test_there_are_python_blocks():
    names = {p.id.split(":")[0] for p in _python_blocks()}
    assert {"README.md", "docs/python-api.md", "docs/cli.md"} <= names


# --------------------------------------------------------------------------------------
# (b) links and paths resolve
# --------------------------------------------------------------------------------------

def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to '-'."""
    text = INLINE_CODE.sub(lambda m: m.group(2), heading.strip())
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.M):
        slug = _slug(m.group(1))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def _link_problems(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    prose = _without_code(text)
    targets = [(m.group(1), m.start()) for m in LINK.finditer(prose)]
    targets += [(m.group(1), m.start()) for m in HTML_SRC.finditer(prose)]
    problems = []
    for target, offset in targets:
        where = f"{_rel(page)}:{_line_of(prose, offset)}: {target}"
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
            continue  # http:, https:, mailto:
        file_part, _, fragment = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            problems.append(f"{where}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in _anchors(dest):
            problems.append(f"{where}: no heading with the anchor #{fragment}")
    return problems


def _path_problems(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    problems = []
    for m in REPO_PATH.finditer(text):
        path = m.group(1).rstrip(".")
        found = glob.glob(str(ROOT / path)) if "*" in path else (ROOT / path).exists()
        if not found:
            problems.append(f"{_rel(page)}:{_line_of(text, m.start())}: {path}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_links_and_images_resolve(page):
    assert _link_problems(page) == []


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_named_repository_files_exist(page):
    assert _path_problems(page) == []


# --------------------------------------------------------------------------------------
# (c) command-line options exist
# --------------------------------------------------------------------------------------

def _help(argv: list[str]) -> str:
    from armdyn.gui.app import main  # imports no Qt for --help

    out = io.StringIO()
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "400"  # one line per option: no option split at a hyphen
    try:
        with redirect_stdout(out), pytest.raises(SystemExit) as stop:
            main(argv)
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    assert stop.value.code == 0
    return out.getvalue()


@pytest.fixture(scope="module")
def parser_options() -> dict[str, set[str]]:
    return {command: set(OPTION.findall(_help([*command.split(), "--help"])))
            for command in COMMANDS}


def _command_options(line: str) -> tuple[str, list[str]] | None:
    """(subcommand or "", options) of an `armdyn` command in a line of code, or None."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        words = line.split()
    for k, word in enumerate(words):
        if word == "armdyn" or word.endswith("/armdyn") or word in ("armdyn.gui.app",
                                                                    "armdyn.core.cli"):
            rest = words[k + 1:]
            command = next((c for c in COMMANDS[:0:-1] if rest[:len(c.split())] == c.split()),
                           "")
            if word == "armdyn.core.cli" and not command:
                return None
            options = [w.split("=")[0] for w in rest if OPTION.fullmatch(w.split("=")[0])]
            return command, options
    return None


def test_command_lines_in_the_docs_use_existing_options(parser_options):
    unknown = []
    for page in PAGES:
        for line in _code_lines(page.read_text(encoding="utf-8")):
            found = _command_options(line)
            if found is None:
                continue
            command, options = found
            unknown += [f"{_rel(page)}: armdyn {command} {option}  (in: {line.strip()})"
                        for option in options if option not in parser_options[command]]
    assert unknown == []


def test_cli_page_names_only_existing_options(parser_options):
    every = set().union(*parser_options.values())
    text = CLI_PAGE.read_text(encoding="utf-8")
    unknown = []
    for m in INLINE_CODE.finditer(FENCE.sub("", text)):
        span = m.group(2)
        if _command_options(span) is not None:
            continue  # a whole command: checked with the code lines
        unknown += [option for option in OPTION.findall(span) if option not in every]
    assert unknown == []


def test_cli_page_names_every_option(parser_options):
    text = CLI_PAGE.read_text(encoding="utf-8")
    named = set(OPTION.findall(text))
    missing = {command or "(window)": sorted(options - named)
               for command, options in parser_options.items() if options - named}
    assert missing == {}


def _cli_examples():
    lines = list(_code_lines(CLI_PAGE.read_text(encoding="utf-8")))
    for k, line in enumerate(lines):
        text = line.strip()
        fails = text.startswith("$ ")
        text = text.removeprefix("$ ")
        if re.match(r"armdyn (sweep )?(inverse|simulate) robots/", text):
            if fails:
                assert k + 1 < len(lines) and lines[k + 1].startswith("armdyn: "), text
            yield pytest.param(text.split(" #")[0], fails, id=text[:60])


@pytest.mark.parametrize("command, fails", list(_cli_examples()))
def test_cli_example_runs(command, fails, tmp_path, monkeypatch, capsys):
    from armdyn.core.cli import main

    monkeypatch.chdir(ROOT)
    argv = shlex.split(command)[1:]
    if "-o" in argv:
        k = argv.index("-o") + 1
        argv[k] = str(tmp_path / argv[k])
    status = main(argv)
    err = capsys.readouterr().err
    assert (status != 0) if fails else (status == 0), err
    assert err.strip().count("\n") <= 1 or "warning" in err, err


# --------------------------------------------------------------------------------------
# (d) statements of docs/cli.md that a run can check
# --------------------------------------------------------------------------------------

def test_modules_run_with_python_m_exist():
    """`python -m armdyn.gui.app ...` in a page names a module that exists."""
    import importlib.util

    missing = []
    for page in PAGES:
        for line in _code_lines(page.read_text(encoding="utf-8")):
            for module in re.findall(r"python3? -m ([\w.]+)", line):
                if importlib.util.find_spec(module.split(".")[0]) is None or (
                        importlib.util.find_spec(module) is None):
                    missing.append(f"{_rel(page)}: {module}")
    assert missing == []


def _model_file_kinds() -> dict[str, str]:
    """command -> the text of its MODEL_FILE row in docs/cli.md's option tables."""
    text = CLI_PAGE.read_text(encoding="utf-8")
    rows = {}
    for command in ("inverse", "simulate"):
        section = text.split(f"## `armdyn {command}`", 1)[1].split("\n## ", 1)[0]
        row = re.search(r"^\| `MODEL_FILE` \|([^|]*)\|", section, re.M)
        assert row, f"docs/cli.md: no MODEL_FILE row for armdyn {command}"
        rows[command] = row.group(1)
    return rows


def test_cli_reads_every_kind_of_model_its_page_names(tmp_path, capsys):
    """Each kind of model file the MODEL_FILE rows name (and none they leave out: a
    URDF is read, so the rows must say so) runs through `inverse` and `simulate`."""
    from armdyn.core import load_robot, save_urdf
    from armdyn.core.cli import main

    urdf = tmp_path / "two_link.urdf"
    save_urdf(load_robot(ROOT / "robots" / "two_link_planar.toml"), urdf)
    examples = {"robot": ROOT / "robots" / "two_link_planar.toml",
                "mechanism": ROOT / "robots" / "fourbar.toml", "URDF": urdf,
                "short name": "two_link_planar"}
    for command, row in _model_file_kinds().items():
        for kind, model in examples.items():
            assert kind in row, f"armdyn {command} reads a {kind}; docs/cli.md does not say so"
            extra = ["--target", "10"] if command == "inverse" else []
            if command == "inverse" and kind != "mechanism":
                extra = ["--target", "10,10"]
            status = main([command, str(model), *extra, "-T", "0.1",
                           "-o", str(tmp_path / "out.csv")])
            assert status == 0, (command, kind, capsys.readouterr().err)


def test_every_screenshot_in_the_docs_is_taken_by_the_script():
    """scripts/screenshots.py takes every picture a page shows (or lists it as taken by
    hand, or by another script it names), each with a command line the window's parser
    accepts."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("screenshots",
                                                  ROOT / "scripts" / "screenshots.py")
    shots = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(shots)
    shown = set()
    for page in PAGES:
        shown |= set(re.findall(r"screenshots/([\w-]+)\.png", page.read_text(encoding="utf-8")))
    assert shown - set(shots.SHOTS) - set(shots.BY_HAND) - set(shots.BY_SCRIPT) == set()
    assert all((ROOT / script).is_file() for script in shots.BY_SCRIPT.values())
    from armdyn.gui.app import _check_outputs, _parser

    for name in shots.SHOTS:
        line = shots.command(name, heavy_elbow=ROOT / "robots" / "puma560_saha.toml")
        args = _parser().parse_args(line[line.index("armdyn.gui.app") + 1:])
        assert _check_outputs(args) is None, name
        assert args.screenshot.endswith(f"{name}.png")
