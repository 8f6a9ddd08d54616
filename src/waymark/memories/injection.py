"""Memory text that reads as an instruction to the agent rather than knowledge about the work.

Packets put memories in front of the model, so a memory is a way in for prompt injection:
text copied from a web page, a README or a tool's output that says "ignore previous
instructions", pipes a download into a shell, carries tool-call or chat markup, or hides
characters (controls, bidi overrides, tag characters) the reader never sees. Such a write is
flagged and waits in the review queue; only a person's approval lets it into a packet. The
packet's fence stays either way: this is one more layer, not the only one.

Plain `re`, compiled on first use: only writes call this, never a hook's read path.
"""

from __future__ import annotations

import re

_OVERRIDE = (
    r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|of\s+)*"
    r"(?:previous|prior|above|earlier|preceding|former|your|system|developer|safety)\s+"
    r"(?:instructions?|prompts?|rules?|directions?|messages?|guidelines?|context)\b"
    r"|\b(?:reveal|print|repeat|show|output|leak)\s+(?:your|the)\s+(?:system|developer|hidden)"
    r"\s+(?:prompt|instructions?|message)\b"
    r"|\bdo\s+not\s+(?:tell|inform|show)\s+the\s+user\b"
    r"|\bnew\s+(?:system\s+)?instructions?\s*:"
)
_PIPE_TO_SHELL = (
    r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b[^\n|;&]*\|\s*"
    r"(?:sudo\s+(?:-\S+\s+)*)?(?:ba|z|da|k)?sh\b"
    r"|\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n|;&]*\|\s*"
    r"(?:sudo\s+)?(?:python3?|perl|ruby|node|iex|invoke-expression|powershell|pwsh)\b"
    r"|\b(?:ba|z)?sh\s+(?:-c\s+)?[\"']?\$\(\s*(?:curl|wget)\b"
    r"|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b"
)
_MARKUP = (
    r"<\s*/?\s*(?:system|assistant|tool_call|tool_use|tool_result|function_calls?|"
    r"function_results?|invoke|antml:[a-z_]+)\b[^>]{0,200}>"
    r"|<\|(?:im_start|im_end|system|assistant|user|endoftext|eot_id|start_header_id)\|>"
    r"|\[/?inst\]|<<\s*/?sys\s*>>"
)
# C0 controls but tab, newline and carriage return; DEL; C1 controls; bidi embeddings,
# overrides, isolates and marks; zero-width space and word joiner; BOM inside text; Unicode
# tag characters (invisible ASCII). The zero-width joiner is left alone: emoji use it.
_HIDDEN = (
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060"
    "\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
# Lower-case patterns: a text is searched lower-cased (5x faster than re.IGNORECASE), or with
# IGNORECASE when lower-casing changed its length (`İ`), so spans always index the text.
_CHECKS = (
    (_OVERRIDE, True, "tells the agent to ignore its instructions"),
    (_PIPE_TO_SHELL, True, "pipes a download into a shell"),
    (_MARKUP, True, "carries tool-call or chat markup"),
    (_HIDDEN, False, "holds invisible control or bidi characters"),
)
_COMPILED: dict[tuple[str, int], re.Pattern[str]] = {}


def _pattern(source: str, flags: int) -> re.Pattern[str]:
    found = _COMPILED.get((source, flags))
    if found is None:
        found = _COMPILED[(source, flags)] = re.compile(source, flags)
    return found


def _search(source: str, folded: bool, text: str, lower: str) -> re.Match[str] | None:
    if not folded:
        return _pattern(source, 0).search(text)
    if len(lower) == len(text):
        return _pattern(source, 0).search(lower)
    return _pattern(source, re.IGNORECASE).search(text)


def instruction_like(*texts: str) -> list[str]:
    """Why the texts read as instructions to the agent, each reason once with what matched
    (`pipes a download into a shell: 'curl -s x | sh'`); [] when they do not."""
    pairs = [(text or "", (text or "").lower()) for text in texts]
    found = []
    for source, folded, why in _CHECKS:
        for text, lower in pairs:
            hit = _search(source, folded, text, lower)
            if hit is not None:
                break
        else:
            continue
        if source is _HIDDEN:
            found.append(f"{why} (U+{ord(hit.group(0)):04X})")
        else:
            start, end = hit.span()  # what matched, as the text has it
            found.append(f"{why}: {text[start:end][:60]!r}")
    return found
