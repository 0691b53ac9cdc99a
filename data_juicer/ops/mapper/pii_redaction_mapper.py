import re
from typing import Any, List, Optional, Tuple

from data_juicer.ops.base import Mapper
from data_juicer.ops.registry import OPERATORS

# Keys whose string values are redacted wherever they occur in a (nested) sample dict.
_PII_VALUE_KEYS = frozenset(("file_path", "path", "file", "arguments", "file_paths"))

# The detection patterns are part of the op's behaviour (shared with Data-Juicer 1.6.1) and are
# kept here as data. "pre" patterns capture a prefix in group 1 that is kept before the mask.
_PATH_PREFIX = r"(^|[\s\"'(\[=])"
_IPV4_OCTET = r"(?:25[0-5]|2[0-4]\d|[01]?\d\d?)"
_PATTERNS = {
    "pem": r"-----BEGIN [A-Z0-9 -]+-----[\s\S]*?-----END [A-Z0-9 -]+-----",
    "jwt": r"\beyJ[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\b",
    "url": r"https?://[^\s\"'<>]+",
    "ipv4": r"(?<![0-9.])(?:" + _IPV4_OCTET + r"\.){3}" + _IPV4_OCTET + r"(?![0-9])",
    "ipv6": r"\[[0-9a-fA-F:.]{3,}\](?::\d{1,5})?\b",
    "mac": r"(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}\b",
    "path_unix": _PATH_PREFIX + r"(/(?:Users?|home|tmp|etc|var|opt|Applications)[^\s\"')\]]*(?:/[^\s\"')\]]*)*)",
    "path_win": _PATH_PREFIX + r"([A-Za-z]:\\[^\s\"')\]]*(?:\\[^\s\"')\]]*)*)",
    "path_unc": _PATH_PREFIX + r"(\\\\[^\s\"')\]]+)",
    "email": r"[a-zA-Z0-9][\w.+-]*@[\w.-]+\.(?:[a-zA-Z]{2,}|\w{2,})",
    "secret": r"(?i)(\b(?:api[_-]?key|apikey|secret|password|passwd|token|auth|authorization"
    r"|credential|license[_-]?key)\s*[:=]\s*[\"']?)([^\s\"',}\]]+)",
    "id": r"(?i)\b(session[_-]?id|user[_-]?id|request[_-]?id|trace[_-]?id)\s*[:=]\s*[\"']?[\w.-]+",
    "channel": r"(?i)(\bchannel\s*[:=]\s*[\"']?|当前的\s*channel\s*[:：]\s*)"
    r"(feishu|dingtalk|wecom|wechat_work|email|mail|飞书|钉钉|企业微信|邮箱)\b",
    "feishu_open_id": r"(?i)\bou_[0-9a-f]{32}\b",
    "open_id": r"\b(ou_|u_|uid_)[0-9a-zA-Z_-]{16,64}\b",
    "phone_cn": r"\b1[3-9]\d{9}\b",
    "phone_intl": r"\+\d{1,4}[-.\s]?\d{6,14}\b",
    "id_card": r"\b[1-9]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx]\b",
}
_COMPILED: dict = {}


def _rx(name: str) -> "re.Pattern":
    pat = _COMPILED.get(name)
    if pat is None:
        pat = _COMPILED[name] = re.compile(_PATTERNS[name])
    return pat


@OPERATORS.register_module("pii_redaction_mapper")
class PiiRedactionMapper(Mapper):
    """Masks personal and secret data with regular expressions: file paths (Unix, Windows, UNC),
    emails, ``key: value`` secrets, session/user/request/trace ids, Chinese mobile and
    international phone numbers, Chinese ID-card numbers, agent channel names
    (``channel: feishu`` ...), Feishu/DingTalk/WeCom open ids, PEM blocks, JWTs, IPv4 and
    bracketed IPv6 addresses, MAC addresses and, optionally, http(s) URLs.

    The masks run in a fixed order (PEM, JWT, URL, IP, MAC, paths, emails, secrets, ids,
    channels, open ids, phones, ID cards, then ``extra_patterns``). For kv-style masks
    (paths, secrets, ids, channels) the leading key/delimiter is kept. Replacements are
    ``re.sub`` templates. Every key of ``redact_keys`` is handled: strings are masked, the
    ``messages_key`` list of chat messages has its ``content`` (string or text blocks) and
    tool-call ``arguments`` masked, ``dialog_history`` pairs have both sides masked, and any
    other 2-item list has both its strings masked. Finally, anywhere in the sample, strings
    held by ``file_path``/``path``/``file``/``arguments``/``file_paths`` keys and strings
    inside lists are masked too.

    :param mask_paths: mask Unix (/home, /Users, /tmp, /etc, /var, /opt...), Windows and UNC paths
    :param mask_emails: mask email addresses
    :param mask_secrets: mask values of api_key/secret/password/token/auth/credential/license_key
    :param mask_ids: mask values of session_id/user_id/request_id/trace_id (the key is kept)
    :param mask_phones: mask Chinese mobile and international (+cc) phone numbers
    :param mask_id_cards: mask 18-digit Chinese ID-card numbers
    :param mask_channel_ids: mask agent channel names after ``channel:``
    :param mask_platform_open_ids: mask Feishu/DingTalk/WeCom open ids (ou_, u_, uid_ ...)
    :param mask_pem: mask PEM key/certificate blocks
    :param mask_jwt: mask JWT-shaped tokens (``eyJ...``)
    :param mask_urls: mask http(s) URLs
    :param mask_ips: mask IPv4 and bracketed IPv6 addresses
    :param mask_macs: mask MAC addresses
    :param path_replacement: replacement for paths
    :param email_replacement: replacement for emails
    :param secret_replacement: replacement for secret values
    :param id_replacement: replacement for id values
    :param phone_replacement: replacement for phone numbers
    :param id_card_replacement: replacement for ID-card numbers
    :param channel_id_replacement: replacement for channel names and open ids
    :param pem_replacement: replacement for PEM blocks
    :param jwt_replacement: replacement for JWTs
    :param url_replacement: replacement for URLs
    :param ip_replacement: replacement for IP addresses
    :param mac_replacement: replacement for MAC addresses
    :param extra_patterns: more ``(regex, replacement)`` pairs applied last
    :param text_key: field holding the text (also the first default redact key)
    :param redact_keys: fields to redact; default: text_key, query, response, dialog_history, messages
    :param messages_key: field holding a list of chat messages
    """

    def __init__(
        self,
        mask_paths: bool = True,
        mask_emails: bool = True,
        mask_secrets: bool = True,
        mask_ids: bool = True,
        mask_phones: bool = True,
        mask_id_cards: bool = True,
        mask_channel_ids: bool = True,
        mask_platform_open_ids: bool = True,
        mask_pem: bool = True,
        mask_jwt: bool = True,
        mask_urls: bool = False,
        mask_ips: bool = True,
        mask_macs: bool = True,
        path_replacement: str = "[PATH_REDACTED]",
        email_replacement: str = "[EMAIL_REDACTED]",
        secret_replacement: str = "[REDACTED]",
        id_replacement: str = "[ID_REDACTED]",
        phone_replacement: str = "[PHONE_REDACTED]",
        id_card_replacement: str = "[ID_CARD_REDACTED]",
        channel_id_replacement: str = "[CHANNEL_ID_REDACTED]",
        pem_replacement: str = "[PEM_REDACTED]",
        jwt_replacement: str = "[JWT_REDACTED]",
        url_replacement: str = "[URL_REDACTED]",
        ip_replacement: str = "[IP_REDACTED]",
        mac_replacement: str = "[MAC_REDACTED]",
        extra_patterns: Optional[List[Tuple[str, str]]] = None,
        text_key: str = "text",
        redact_keys: Optional[List[str]] = None,
        messages_key: Optional[str] = "messages",
        **kwargs,
    ):
        super().__init__(text_key=text_key, **kwargs)
        self.extra_patterns = list(extra_patterns or [])
        self.redact_keys = (
            list(redact_keys)
            if redact_keys is not None
            else [text_key, "query", "response", "dialog_history", "messages"]
        )
        self.messages_key = messages_key

        # ordered (pattern, replacement template) steps
        steps: list = []

        def add(flag, names, repl, keep_prefix=False):
            if flag:
                for n in names:
                    steps.append((_rx(n), ("\\1" + repl) if keep_prefix else repl))

        add(mask_pem, ["pem"], pem_replacement)
        add(mask_jwt, ["jwt"], jwt_replacement)
        add(mask_urls, ["url"], url_replacement)
        add(mask_ips, ["ipv4", "ipv6"], ip_replacement)
        add(mask_macs, ["mac"], mac_replacement)
        add(mask_paths, ["path_unix", "path_win", "path_unc"], path_replacement, keep_prefix=True)
        add(mask_emails, ["email"], email_replacement)
        add(mask_secrets, ["secret"], secret_replacement, keep_prefix=True)
        add(mask_ids, ["id"], id_replacement, keep_prefix=True)
        add(mask_channel_ids, ["channel"], channel_id_replacement, keep_prefix=True)
        add(mask_platform_open_ids, ["feishu_open_id", "open_id"], channel_id_replacement)
        add(mask_phones, ["phone_cn", "phone_intl"], phone_replacement)
        add(mask_id_cards, ["id_card"], id_card_replacement)
        for item in self.extra_patterns:
            try:
                pat, repl = item
            except (TypeError, ValueError):
                raise ValueError(
                    f"{self.name}: each extra_patterns item must be a (regex, replacement) pair, got {item!r}"
                ) from None
            try:
                steps.append((re.compile(pat), repl))
            except re.error as e:
                raise ValueError(f"{self.name}: invalid regex {pat!r} in extra_patterns: {e}") from None
        self._steps = tuple(steps)

    # -- text ---------------------------------------------------------------------------------
    def _redact_text(self, text):
        if not text or not isinstance(text, str):
            return text
        for pat, repl in self._steps:
            text = pat.sub(repl, text)
        return text

    def _redact_in(self, val: Any) -> None:
        """In place: strings under PII keys of dicts and strings inside lists, recursively."""
        if isinstance(val, dict):
            for k, v in list(val.items()):
                if isinstance(v, str):
                    if k in _PII_VALUE_KEYS:
                        val[k] = self._redact_text(v)
                else:
                    self._redact_in(v)
        elif isinstance(val, list):
            for i, item in enumerate(val):
                if isinstance(item, str):
                    val[i] = self._redact_text(item)
                else:
                    self._redact_in(item)

    def _redact_args_holder(self, holder: dict) -> None:
        args = holder.get("arguments")
        if isinstance(args, str):
            holder["arguments"] = self._redact_text(args)
        elif isinstance(args, dict):
            self._redact_in(args)

    def _redact_messages(self, messages: list) -> None:
        red = self._redact_text
        for msg in messages:
            if not isinstance(msg, dict):
                continue
            content = msg.get("content")
            if isinstance(content, str):
                msg["content"] = red(content)
            elif isinstance(content, list):
                for i, block in enumerate(content):
                    if isinstance(block, str):
                        content[i] = red(block)
                    elif isinstance(block, dict):
                        for k in ("text", "content"):
                            if isinstance(block.get(k), str):
                                block[k] = red(block[k])
            for key in ("tool_calls", "tool_use"):
                calls = msg.get(key)
                if not isinstance(calls, list):
                    continue
                for call in calls:
                    if not isinstance(call, dict):
                        continue
                    fn = call.get("function") or call.get("function_call")
                    if isinstance(fn, dict):
                        self._redact_args_holder(fn)
                    self._redact_args_holder(call)

    def _redact_field(self, key: str, val: Any) -> Any:
        red = self._redact_text
        if key == self.messages_key and isinstance(val, list):
            self._redact_messages(val)
            return val
        if isinstance(val, str):
            return red(val)
        if isinstance(val, list) and key == "dialog_history":
            out = []
            for pair in val:
                if isinstance(pair, (list, tuple)) and len(pair) >= 2:
                    q, r = pair[0], pair[1]
                    out.append((red(q) if isinstance(q, str) else q, red(r) if isinstance(r, str) else r))
                else:
                    out.append(pair)
            return out
        if isinstance(val, (list, tuple)) and len(val) == 2:
            q, r = val
            nq = red(q) if isinstance(q, str) else q
            nr = red(r) if isinstance(r, str) else r
            if nq is not q or nr is not r:
                return type(val)((nq, nr))
        return val

    def process_batched(self, samples):
        for key in self.redact_keys:  # a repeated key is redacted again, as in Data-Juicer
            if key in samples:
                samples[key] = [self._redact_field(key, v) for v in samples[key]]
        # then PII-keyed strings and list items anywhere in the sample
        for key, col in list(samples.items()):
            if key in _PII_VALUE_KEYS:
                samples[key] = col = [self._redact_text(v) if isinstance(v, str) else v for v in col]
            for v in col:
                if isinstance(v, (dict, list)):
                    self._redact_in(v)
        return samples
