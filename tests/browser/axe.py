"""axe-core, vendored under vendor/axe-core, run on the page a browser test is looking at.

The dashboard's Content-Security-Policy refuses every script it did not serve itself, so
axe cannot be added as a <script> tag. Playwright's `page.evaluate` runs its code through
the DevTools protocol, in the page's main world, where the page's CSP does not apply: axe
is injected that way, and the page under test keeps its real CSP (no `bypass_csp`).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from playwright.sync_api import Page

AXE_SOURCE = Path(__file__).resolve().parent / "vendor" / "axe-core" / "axe.min.js"
# WCAG 2.0 and 2.1, levels A and AA, and axe's own best practices.
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]
FAILING_IMPACTS = frozenset({"serious", "critical"})

# Runs axe on the whole document; only what the report needs comes back.
_RUN_AXE = """async (tags) => {
  const results = await window.axe.run(document, {
    runOnly: {type: "tag", values: tags},
    resultTypes: ["violations"],
  });
  return results.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    helpUrl: v.helpUrl,
    nodes: v.nodes.map((n) => ({
      target: n.target.map(String).join(" "),
      summary: n.failureSummary || "",
    })),
  }));
}"""


@functools.cache
def _axe_source() -> str:
    # Wrapped as a function call so Playwright evaluates it as a script, not as a
    # function to call; axe sets `window.axe` itself.
    return "(() => {\n" + AXE_SOURCE.read_text(encoding="utf-8") + "\n})()"


def _inject(page: Page) -> None:
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(_axe_source())
    assert page.evaluate("typeof window.axe === 'object'"), "axe-core did not load"


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """Every violation axe finds on the page, whatever its impact."""
    _inject(page)
    violations: list[dict[str, Any]] = page.evaluate(_RUN_AXE, AXE_TAGS)
    return violations


def describe(violations: list[dict[str, Any]]) -> str:
    """One readable block per violation: rule, impact, help, and each offending node."""
    lines = []
    for violation in violations:
        lines.append(f"- {violation['id']} ({violation['impact']}): {violation['help']}")
        lines.append(f"  {violation['helpUrl']}")
        for node in violation["nodes"]:
            summary = " ".join(node["summary"].split())
            lines.append(f"    at {node['target']}: {summary}")
    return "\n".join(lines)


def assert_accessible(page: Page) -> None:
    """Fails when axe finds a serious or critical violation on the page as it is now."""
    failing = [v for v in axe_violations(page) if v["impact"] in FAILING_IMPACTS]
    assert not failing, (
        f"axe-core found {len(failing)} serious or critical accessibility violation(s) "
        f"on {page.url}:\n{describe(failing)}"
    )


def assert_no_violations(page: Page) -> None:
    """Fails when axe finds anything at all on the page as it is now, whatever its impact."""
    found = axe_violations(page)
    assert not found, f"axe-core found {len(found)} violation(s) on {page.url}:\n{describe(found)}"
