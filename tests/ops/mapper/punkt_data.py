"""Write a punkt model as NLTK's ``punkt_tab`` folder (for tests: NLTK's own writer refuses
folders it does not consider private)."""

import os


def write_punkt_tab(params, folder: str) -> str:
    from nltk.tabdata import TabEncoder

    enc = TabEncoder()
    os.makedirs(folder, exist_ok=True)
    for name, text in (("collocations.tab", enc.tups2tab(params.collocations)),
                       ("sent_starters.txt", enc.set2txt(params.sent_starters)),
                       ("abbrev_types.txt", enc.set2txt(params.abbrev_types)),
                       ("ortho_context.tab", enc.ivdict2tab(params.ortho_context))):
        with open(os.path.join(folder, name), "w", encoding="utf-8", newline="") as f:
            f.write(text)
    return folder
