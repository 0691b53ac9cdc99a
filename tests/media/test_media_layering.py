"""data_juicer/media sits below ops/: its modules import only data_juicer.media and data_juicer.utils."""
import ast
import os

import data_juicer.media as media


def test_media_imports_point_down():
    folder = os.path.dirname(media.__file__)
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".py"):
            continue
        tree = ast.parse(open(os.path.join(folder, name), encoding="utf-8").read())
        for node in ast.walk(tree):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            for mod in mods:
                if mod.startswith("data_juicer"):
                    assert mod.startswith(("data_juicer.media", "data_juicer.utils")), f"{name} imports {mod}"
