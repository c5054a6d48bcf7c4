"""A small corpus of hostile Markdown for search tests (``tests/search/test_search_properties.py``
and the MCP smoke ``tests/conformance/test_hostile_search.py``): identifiers with punctuation,
code blocks, every script the engine treats apart (CJK, Hangul, accented Latin, right-to-left),
emoji (some newer than Unicode 6.1, which FTS5's unicode61 reads as word characters), odd
spaces, a very long token and the same passage in several versions."""

from __future__ import annotations

from pathlib import Path

LONG_TOKEN = "xxx" + "".join(f"{i:02d}abc" for i in range(60))  # one 303-character token
NBSP, ZWSP, ZWJ = "\u00a0", "\u200b", "\u200d"

CORPUS: dict[str, str] = {
    "code/shell.md": (
        "# Shell operators\n\n"
        "Chain commands with `a && b || c`; the second runs only when the first succeeds.\n\n"
        "```bash\nmake build && make test || echo failed\nexport $var=1; grep --flag=value file.txt\n```\n\n"
        "## Variables\n\nRead `$var` and `${HOME}` inside double quotes; `$?` holds the exit status.\n"
    ),
    "code/rust.md": (
        "# Rust collections\n\n"
        "A `std::vec::Vec<T>` grows on the heap; `Rc::strong_count(&a)` counts owners.\n\n"
        "```rust\nlet v: std::vec::Vec<i32> = Vec::new();\nlet n = Rc::strong_count(&shared);\n```\n"
    ),
    "code/powershell.md": (
        "---\ntitle: PowerShell parameters\ntags:\n  - powershell\n  - scripting\n---\n"
        "# PowerShell parameters\n\n"
        "Restrict a value with `[ValidateSet('a','b')]` on the parameter.\n\n"
        "```powershell\nparam([ValidateSet('a','b')][string]$Mode)\n```\n"
    ),
    "code/python.md": (
        "---\ntags: python\n---\n"
        "# Python calls\n\n"
        "Call `foo_bar.baz()` after decorating the function with `@decorator`.\n\n"
        "```python\n@decorator\ndef run():\n    return foo_bar.baz(limit=10)\n```\n\n"
        "## Tags\n\nWrite #tag in a note to tag it; #release-notes too.\n"
    ),
    "langs/dotnet.md": (
        "# Languages on .NET\n\nC# and F# compile for .NET; C++ does not need it. node.js runs JavaScript.\n"
    ),
    "langs/emoji.md": (
        "# Reactions 🎉\n\nShip it 🚀 when the build is green ✅. Thumbs up 👍🏽 means approved; 🤖 reviews.\n"
    ),
    "intl/zh.md": (
        "# 状态管理\n\n在组件之间共享状态可以使用响应式API。\n\n## 侦听器\n\n侦听器在状态变化时执行副作用。\n"
    ),
    "intl/ja.md": "# 天気予報\n\n東京都の天気は晴れです。カタカナのテキストとひらがな、半角ｶﾀｶﾅ。\n",
    "intl/ko.md": "# 한국어 문서\n\n검색 엔진은 한국어 문장을 띄어쓰기 단위로 나눕니다.\n",
    "intl/fr.md": "# Le café\n\nUn café crème, une façade naïve. Crème brûlée au dessert; Ærøskøbing, Straße, ÉCOLE.\n",
    "intl/menu.md": "# Menu\n\nOrder a coffee or a tea at the counter; the menu lists every dessert and crepe.\n",
    "intl/el.md": "# Ελληνικά και русский\n\nΗ σοφία, ΣΟΦΊΑ. Поиск по словам, ПОИСК. Noe\u0308l décomposé.\n",
    "intl/rtl.md": "# نص عربي\n\nمحرك البحث يجد الكلمات العربية. עברית: מנוע חיפוש מוצא מילים.\n",
    "intl/spaces.md": (
        f"# Odd spaces\n\nnon{NBSP}breaking space and zero{ZWSP}width joiner{ZWJ}text sit here.\n\n"
        f"A very long token follows: {LONG_TOKEN} end.\n"
    ),
    "prose/echo.md": "# Echo\n\nThe echo command prints its arguments. Echoes go to standard output.\n",
    "prose/password.md": (
        "# Terminal input\n\nEchoing a password is unsafe: turn echoing off while the user types it.\n"
    ),
    "prose/stop.md": "# To be or not to be\n\nThat is the question: whether to be, or not to be.\n",
    "v1/upgrade.md": "# Upgrade\n\nStop every node, replace the binaries, then start the nodes again.\n",
    "v2/upgrade.md": "# Upgrade\n\nStop every node, replace the binaries, then start the nodes again.\n",
    "v3/upgrade.md": "# Upgrade\n\nStop every node, swap the binaries, then start the nodes again.\n",
}


def write_corpus(root: Path) -> Path:
    for rel, text in CORPUS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root
