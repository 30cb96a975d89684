"""The console's ES modules as the browser loads them: every import names a file the console serves, and no chain of
imports leads back to where it started (a circle makes a module run before what it imports is initialised)."""

from __future__ import annotations

import re
from pathlib import Path

from handlers.console import STATIC

# Static imports and re-exports (`import {a} from "./x.js"`, `import "./x.js"`, `export {a} from "./x.js"`, across
# lines too) and dynamic ones (`import("./x.js")`); comments are dropped first so a commented-out import is none.
IMPORT = re.compile(
    r"""\b(?:import|export)\b[\w\s{},*$]*?\bfrom\s*["']([^"']+)["']|\bimport\s*\(?\s*["']([^"']+)["']"""
)
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def imports_of(source: str) -> list[str]:
    """The module specifiers a console module imports, in order."""
    return [first or second for first, second in IMPORT.findall(COMMENT.sub("", source))]


def module_graph(directory: Path) -> dict[str, list[str]]:
    """Each module of `directory` (by file name) and the modules it imports (by file name)."""
    graph: dict[str, list[str]] = {}
    for path in sorted(directory.glob("*.js")):
        graph[path.name] = [(path.parent / spec).resolve().name for spec in imports_of(path.read_text())]
    return graph


def circles(graph: dict[str, list[str]]) -> list[list[str]]:
    """Every circle a depth-first walk of the graph meets, each as the modules along it, its first one repeated."""
    found: list[list[str]] = []
    done: set[str] = set()

    def walk(module: str, trail: list[str]) -> None:
        if module in trail:
            found.append([*trail[trail.index(module) :], module])
            return
        if module in done:
            return
        for imported in graph.get(module, []):
            walk(imported, [*trail, module])
        done.add(module)

    for module in graph:
        walk(module, [])
    return found


def test_the_import_reader_sees_every_form_of_import_and_skips_comments() -> None:
    source = (
        'import { a, b }\n  from "./one.js";\nimport * as all from "./two.js";\nimport "./three.js";\n'
        'export { c } from "./four.js";\nconst later = await import("./five.js");\n'
        '// import { gone } from "./six.js";\n/* import "./seven.js"; */\nconst important = "from";\n'
    )

    assert imports_of(source) == ["./one.js", "./two.js", "./three.js", "./four.js", "./five.js"]


def test_the_circle_finder_reports_a_circle_through_three_modules() -> None:
    graph = {"a.js": ["b.js"], "b.js": ["c.js"], "c.js": ["a.js"], "d.js": ["a.js"]}

    assert circles(graph) == [["a.js", "b.js", "c.js", "a.js"]]


def test_every_console_import_names_a_file_the_console_serves() -> None:
    graph = module_graph(STATIC)

    assert "console.js" in graph
    missing = {(module, imported) for module, imports in graph.items() for imported in imports if imported not in graph}
    assert not missing


def test_the_console_modules_import_one_another_in_no_circle() -> None:
    assert circles(module_graph(STATIC)) == []
