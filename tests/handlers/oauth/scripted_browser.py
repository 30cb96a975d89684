"""A person's browser, scripted, for a client that opens the authorization URL with `$BROWSER <url>` (mcp-remote,
through the `open` package's xdg-open): follow /authorize to the consent page, approve it with the key in
AM_CONSENT_KEY for the namespace in AM_CONSENT_NAMESPACE, then follow the redirect to the client's callback.
Appends what it did to the file AM_BROWSER_LOG names."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import httpx2

from tests.handlers.oauth.flow import form_of


def main(url: str) -> None:
    log = Path(os.environ["AM_BROWSER_LOG"])
    with httpx2.Client(timeout=30) as browser:
        answer = browser.get(url)
        page = browser.get(answer.headers["location"]) if answer.status_code == 302 else answer
        hidden, offered = form_of(page.text)
        form = {**hidden, **dict.fromkeys(offered, "on")}
        form |= {"namespace": os.environ["AM_CONSENT_NAMESPACE"], "api_key": os.environ["AM_CONSENT_KEY"]}
        submitted = browser.post(str(page.url.join("/consent")), data={**form, "decision": "approve"})
        callback = submitted.headers.get("location", "")
        with log.open("a") as record:
            record.write(f"consent {page.status_code} -> {submitted.status_code} {callback.split('?')[0]}\n")
        if callback:
            landed = browser.get(callback)
            with log.open("a") as record:
                record.write(f"callback {landed.status_code}\n")


if __name__ == "__main__":
    main(sys.argv[1])
