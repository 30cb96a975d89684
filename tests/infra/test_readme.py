"""What a new user reads and copies works from a fresh clone: every relative link of the README and of docs/ names a
file of the repository (and, with an `#anchor`, a heading of that page), the README lists every page of docs/, and
the commands name the CLI where `make install` puts it (`.venv/bin/agent-memory`, or `make keys`)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def prose(text: str) -> str:
    """The page without its fenced code blocks, whose `#` lines and brackets are code, not headings or links."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the link text of any link, lower-cased, punctuation but `-` and `_` dropped,
    spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading's anchor; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", prose(page.read_text()), re.MULTILINE):
        base = slug(heading)
        found.add(f"{base}-{seen[base]}" if base in seen else base)
        seen[base] = seen.get(base, 0) + 1
    return found


def relative_links(page: Path) -> list[tuple[Path, str]]:
    """(target file, anchor or "") for each link that is not to another site."""
    found = []
    for target in LINK.findall(prose(page.read_text())):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        found.append(((page.parent / path).resolve() if path else page, anchor))
    return found


def test_every_relative_link_of_the_readme_and_the_docs_is_a_file_of_the_repository() -> None:
    broken = [
        f"{page.relative_to(ROOT)} -> {target}"
        for page in PAGES
        for target, _ in relative_links(page)
        if not (target.is_relative_to(ROOT) and target.exists())
    ]
    assert broken == []
    assert (ROOT / "docs" / "contract.md").resolve() in {target for target, _ in relative_links(README)}


def test_every_anchor_of_a_relative_link_names_a_heading_of_its_page() -> None:
    broken = [
        f"{page.relative_to(ROOT)} -> {target.relative_to(ROOT)}#{anchor}"
        for page in PAGES
        for target, anchor in relative_links(page)
        if anchor and (target.suffix != ".md" or anchor not in anchors(target))
    ]
    assert broken == []


def test_a_heading_anchor_is_read_as_github_makes_it() -> None:
    assert slug("Connect by URL alone (OAuth)") == "connect-by-url-alone-oauth"
    assert slug("A memory's history, restore and purge") == "a-memorys-history-restore-and-purge"
    assert slug("`serve`'s engine: [DynamoDB Local](x.md)") == "serves-engine-dynamodb-local"
    assert slug("1. Build and deploy") == "1-build-and-deploy"


def test_the_readme_lists_every_page_of_the_docs() -> None:
    listed = {target for target, _ in relative_links(README)}
    assert [page.name for page in PAGES[1:] if page.resolve() not in listed] == []


def test_the_readme_and_the_docs_run_the_cli_by_its_path_in_the_venv() -> None:
    # A bare `agent-memory keys ...` is "command not found": the venv's bin is not on PATH.
    bare = re.compile(r"(?<![/\w-])agent-memory (?:keys|serve|namespace|export|import) [-\w]")
    assert [f"{page.name}: {found}" for page in PAGES for found in bare.findall(page.read_text())] == []
    assert ".venv/bin/agent-memory keys create" in README.read_text()


def named_in_code(page: Path) -> list[str]:
    """The repository paths (`src/...`, `core/...`) and modules (`core.memories`) a page names in inline code."""
    spans = re.findall(r"`([^`\n]+)`", prose(page.read_text()))
    path = re.compile(r"^(?:src|tests|scripts|docs|events|core|handlers|local)/[\w./-]*$")
    module = re.compile(r"^(?:core|handlers|local)(?:\.\w+)+$")
    return [span for span in spans if path.match(span) or module.match(span)]


def exists(name: str) -> bool:
    """A path of the repository (or of src/), or a module of src/, possibly followed by one attribute of it."""
    if "/" in name:
        return (ROOT / name).exists() or (ROOT / "src" / name).exists()
    parts = name.split(".")
    for length in (len(parts), len(parts) - 1):
        base = ROOT / "src" / "/".join(parts[:length])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return True
    return False


def test_every_module_and_path_the_docs_name_exists() -> None:
    # The code moves; the pages that describe it must move with it.
    missing = [
        f"{page.relative_to(ROOT)}: {name}" for page in PAGES for name in named_in_code(page) if not exists(name)
    ]
    assert missing == []
    assert "handlers.aws.http.handler" in named_in_code(ROOT / "docs" / "architecture.md")


def test_make_keys_runs_the_cli_with_args() -> None:
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", "keys", "ARGS=list --namespace alice"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert dry.stdout.splitlines()[-1] == ".venv/bin/agent-memory keys list --namespace alice"


NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}


def test_the_number_of_lambda_artifacts_the_pages_state_is_the_templates() -> None:
    functions = len(re.findall(r"^\s+Type: AWS::Serverless::Function\s*$", (ROOT / "template.yaml").read_text(), re.M))
    stated = [
        (page.name, word)
        for page in PAGES
        for word in re.findall(r"\b(\w+) Lambda artifacts\b", page.read_text())
        if word in NUMBERS
    ]
    assert stated, "no page says how many Lambda artifacts there are"
    assert {(name, NUMBERS[word]) for name, word in stated} == {(name, functions) for name, _ in stated}


def test_the_sam_the_pages_run_is_where_make_sam_installs_it() -> None:
    installed = re.search(r"^SAM_VENV := (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert installed is not None
    named = {
        path
        for page in PAGES
        for path in re.findall(r"\.tools/[\w/.-]*\w", page.read_text())
        if "sam" in path  # not the other tools there (docs/operations.md's own DynamoDB Local)
    }
    # The CLI's folder, and the command in it the pages run.
    assert named == {installed[1], f"{installed[1]}/bin/sam"}
