"""The optional embeddings endpoint (OpenAI-compatible `/v1/embeddings`).

Configured like the LLM endpoint: `config/embeddings.json` (`baseUrl`, `model`, `apiKey`,
`timeoutSeconds`, `batchSize`), then the MRPTUI_EMBED_* variables. No `baseUrl` means no
endpoint: the dense lane answers `unsupported` and nothing connects anywhere.

Unit vectors are kept in the index store beside each KB file's segment (core/store/vectors.py).
The `.npz` cache of earlier versions (`cacheDir`) is removed on first use (`remove_legacy_cache`).
"""

import contextlib
import json
import os
import re
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast
from urllib.parse import urlsplit

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from core.infra.llm import check_http_url, load_endpoint_config
from core.infra.resources import config_dir

_ENV_FIELDS = {"MRPTUI_EMBED_BASE_URL": "base_url", "MRPTUI_EMBED_MODEL": "model", "MRPTUI_EMBED_API_KEY": "api_key"}
_LABEL = "embeddings endpoint"
# A batch of 64 vectors of 4096 floats as JSON is a few MB; anything far beyond is not a reply.
_MAX_REPLY_BYTES = 64 * 1024 * 1024
_EXCERPT_CHARS = 200


class EmbeddingConfig(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True, extra="forbid")

    base_url: str | None = None
    model: str = Field(default="text-embedding-3-small", min_length=1)
    api_key: SecretStr | None = None
    timeout_s: float = Field(default=10.0, gt=0, le=600, alias="timeoutSeconds")
    batch_size: int = Field(default=64, ge=1, le=2048)
    # Text sent per unit is cut here: endpoints refuse over-long inputs, and the start of a unit
    # (topic, then claim) carries its meaning.
    max_chars: int = Field(default=8000, ge=16, le=200_000)
    max_dimensions: int = Field(default=8192, ge=1, le=65_536)
    # Where earlier versions cached vectors; read only to remove those files (the index store
    # keeps vectors now, core/store/vectors.py), so an old config file still loads.
    cache_dir: Path | None = None

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        return check_http_url(value)

    @property
    def endpoint(self) -> str:
        base = (self.base_url or "").rstrip("/").removesuffix("/v1")
        return f"{base}/v1/embeddings"

    def legacy_cache_folder(self) -> Path:
        if self.cache_dir is not None:
            return self.cache_dir
        root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(root) / "mrptui" / "dense"


def load_embedding_config(directory: Path | None = None, environ: Mapping[str, str] | None = None) -> EmbeddingConfig:
    """`embeddings.json` (optional) from the config directory, then the MRPTUI_EMBED_* variables."""
    path = (directory or config_dir()) / "embeddings.json"
    return load_endpoint_config(EmbeddingConfig, path, _ENV_FIELDS, environ)


class EmbeddingError(Exception):
    """The endpoint could not give usable vectors; `reason` is one line fit for a trace event."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


# Built on first use, like the LLM's reply models: no reply is read without an endpoint.
class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    index: int = Field(ge=0)
    embedding: list[float] = Field(min_length=1)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    data: list[_Item]


class EmbeddingClient:
    def __init__(self, config: EmbeddingConfig):
        self.config = config

    @property
    def configured(self) -> bool:
        return self.config.base_url is not None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length float32 row per text; raises EmbeddingError with the endpoint's fault."""
        if not self.configured:
            raise EmbeddingError("no embeddings endpoint configured (config/embeddings.json baseUrl)")
        rows = []
        for start in range(0, len(texts), self.config.batch_size):
            rows.append(
                self._batch([t[: self.config.max_chars] for t in texts[start : start + self.config.batch_size]])
            )
        matrix = np.vstack(rows) if rows else np.zeros((0, 1), dtype=np.float32)
        if rows and len({r.shape[1] for r in rows}) != 1:
            raise EmbeddingError(f"{_LABEL} returned vectors of different lengths across batches")
        return matrix

    def _batch(self, texts: list[str]) -> np.ndarray:
        body = json.dumps({"model": self.config.model, "input": texts}).encode("utf-8")
        status, reply = _post_json(self.config.endpoint, body, self.config.api_key, self.config.timeout_s)
        excerpt = reply.decode("utf-8", errors="replace")[:_EXCERPT_CHARS]
        if not 200 <= status < 300:
            raise EmbeddingError(f"{_LABEL} returned HTTP {status}: {excerpt}")
        try:
            items = _Reply.model_validate_json(reply).data
        except ValidationError:
            raise EmbeddingError(f"{_LABEL} reply is not an embeddings list: {excerpt}") from None
        if sorted(item.index for item in items) != list(range(len(texts))):
            raise EmbeddingError(f"{_LABEL} returned {len(items)} vectors for {len(texts)} texts")
        dims = {len(item.embedding) for item in items}
        if len(dims) != 1 or dims.pop() > self.config.max_dimensions:
            raise EmbeddingError(f"{_LABEL} returned vectors of unequal or excessive length")
        matrix = np.array([item.embedding for item in sorted(items, key=lambda i: i.index)], dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1)
        if not np.all(np.isfinite(matrix)) or np.any(norms == 0):
            raise EmbeddingError(f"{_LABEL} returned zero or non-finite vectors")
        return matrix / norms[:, None]


def _post_json(endpoint: str, body: bytes, api_key: SecretStr | None, timeout: float) -> tuple[int, bytes]:
    """POST to exactly `endpoint` (no proxy, no redirect); every failure is an EmbeddingError.
    The timeout bounds connecting and each read; a batch reply arrives in one piece."""
    import http.client  # only a configured endpoint pays for http/ssl/email at import time

    parts = urlsplit(endpoint)
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(cast(str, parts.hostname), parts.port, timeout=timeout)  # check_http_url: a host
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key is not None:
        headers["Authorization"] = f"Bearer {api_key.get_secret_value()}"
    try:
        connection.request("POST", parts.path, body=body, headers=headers)
        response = connection.getresponse()
        return response.status, response.read(_MAX_REPLY_BYTES)
    except TimeoutError:
        raise EmbeddingError(f"{_LABEL} timed out after {timeout:g} s") from None
    except ConnectionRefusedError:
        raise EmbeddingError(
            f"{_LABEL} refused the connection ({parts.hostname}:{parts.port or 'default port'})"
        ) from None
    except (OSError, http.client.HTTPException) as exc:
        raise EmbeddingError(f"{_LABEL} unreachable: {type(exc).__name__}: {exc}") from None
    finally:
        connection.close()


# The cache of earlier versions: one `<16 hex digits>.npz` per model (arrays "keys" and "vectors")
# plus `.dense-*.npz` temp files, in `cacheDir` or `<XDG cache>/mrptui/dense`.
_LEGACY_NAME = re.compile(r"[0-9a-f]{16}\.npz|\.dense-[A-Za-z0-9_]+\.npz")
_LEGACY_ARRAYS = frozenset({"keys.npy", "vectors.npy"})


def remove_legacy_cache(config: EmbeddingConfig) -> int:
    """Delete the old dense cache's files (vectors now live in the index store); returns how many.

    Only a regular file whose name is one the old cache wrote, and (for a model file) that is a
    zip of exactly the old cache's two arrays, is removed, so no user file is ever touched; the
    folder goes too when that leaves it empty."""
    folder = config.legacy_cache_folder()
    try:
        entries = list(folder.iterdir()) if folder.is_dir() and not folder.is_symlink() else []
    except OSError:
        return 0
    removed = 0
    for path in entries:
        if _LEGACY_NAME.fullmatch(path.name) and _is_legacy_file(path):
            path.unlink(missing_ok=True)
            removed += 1
    if removed:
        with contextlib.suppress(OSError):
            folder.rmdir()  # only succeeds when nothing else is there
    return removed


def _is_legacy_file(path: Path) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    if path.name.startswith(".dense-"):
        return True
    try:
        with zipfile.ZipFile(path) as archive:
            return set(archive.namelist()) == _LEGACY_ARRAYS
    except (OSError, zipfile.BadZipFile):
        return False
