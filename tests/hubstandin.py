"""A Hugging Face Hub stand-in for the publishing tests: a standard-library HTTP server on
127.0.0.1 that implements the few endpoints ``huggingface_hub`` (2.x) calls to create a
dataset repo, read its info and tree, pre-upload, validate a card's YAML, commit and
download files, with the Hub's answers where the client reads them (``X-Error-Code``,
``X-Repo-Commit``, ``ETag``, 409 on an existing repo, **412 on a stale parent commit**).

What it does not do, and the tests therefore do not exercise: the large-file path (every
pre-upload answers ``"regular"``: no LFS batch API, no Xet storage), pagination of trees,
pull requests, the dataset viewer, access control beyond one bearer token.

Fault injection, for the tests: ``drop_commits`` (the server reads half a commit's body
and closes the connection without answering or applying it), ``gate`` (commits are held
until ``gate`` of them have arrived, so concurrent publishers are known to have read the
same head), and ``log`` (method, path, status) of every request.

Source of the endpoint shapes: ``huggingface_hub`` 2.4 (``hf_api.py``, ``_commit_api.py``,
``file_download.py``, ``utils/_http.py``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

ZERO = "0" * 40


def blob_oid(data: bytes) -> str:
    """Git's blob sha1 (what the Hub calls a regular file's oid)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    private: bool
    branches: dict[str, str] = field(default_factory=dict)  # branch -> commit sha
    commits: dict[str, dict] = field(default_factory=dict)  # sha -> {"parent", "files": {path: bytes}, "title"}

    def files(self, rev: str) -> dict[str, bytes] | None:
        sha = self.branches.get(rev, rev)
        c = self.commits.get(sha)
        return None if c is None else c["files"]

    def resolve(self, rev: str) -> str | None:
        sha = self.branches.get(rev, rev)
        return sha if sha in self.commits else None


class HubStandIn:
    """The server; ``with HubStandIn(token) as hub:`` serves on ``hub.endpoint``."""

    def __init__(self, token: str):
        self.token = token
        self.repos: dict[str, Repo] = {}
        self.lock = threading.Lock()
        self.log: list[tuple[str, str, int]] = []
        self.drop_commits = False
        self.gate = 0
        self._arrived = 0
        self._gate_open = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "HubStandIn":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def head(self, repo_id: str, branch: str = "main") -> str | None:
        repo = self.repos.get(repo_id)
        return None if repo is None else repo.branches.get(branch)

    def files(self, repo_id: str, rev: str = "main") -> dict[str, bytes]:
        return dict(self.repos[repo_id].files(rev) or {})

    def commit_count(self, repo_id: str) -> int:
        return len(self.repos[repo_id].commits) if repo_id in self.repos else 0

    def _wait_gate(self) -> None:
        with self.lock:
            self._arrived += 1
            if self._arrived >= self.gate:
                self._gate_open.set()
        self._gate_open.wait(timeout=60)


def _handler(hub: HubStandIn):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet
            pass

        # --- helpers ---------------------------------------------------------------
        def _send(self, status: int, body: bytes = b"", headers: dict | None = None, *, head: bool = False):
            hub.log.append((self.command, self.path, status))
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _json(self, status: int, obj, headers: dict | None = None):
            self._send(status, json.dumps(obj).encode(), {"Content-Type": "application/json", **(headers or {})})

        def _error(self, status: int, message: str, code: str | None = None):
            self._json(status, {"error": message}, {"X-Error-Code": code} if code else None)

        def _authorized(self) -> bool:
            return self.headers.get("Authorization") == f"Bearer {hub.token}"

        def _body(self) -> bytes:
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def _repo(self, repo_id: str, *, write: bool) -> Repo | None:
            repo = hub.repos.get(repo_id)
            if repo is None or (repo.private or write) and not self._authorized():
                self._error(401 if write and repo is not None else 404, "Repository not found", "RepoNotFound")
                return None
            return repo

        # --- routes ----------------------------------------------------------------
        def do_HEAD(self):
            self._route(head=True)

        def do_GET(self):
            self._route()

        def do_POST(self):
            self._route()

        def _route(self, head: bool = False):
            url = urlsplit(self.path)
            path, query = unquote(url.path), parse_qs(url.query)
            if self.command == "POST" and path == "/api/repos/create":
                return self._create()
            if self.command == "POST" and path == "/api/validate-yaml":
                return self._validate_yaml()
            m = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)(?:/revision/(.+))?", path)
            if m and self.command == "GET":
                return self._info(m.group(1), m.group(2) or "main")
            m = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/tree/([^/]+)(?:/(.*))?", path)
            if m and self.command == "GET":
                return self._tree(m.group(1), m.group(2), m.group(3) or "", query)
            m = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/preupload/(.+)", path)
            if m and self.command == "POST":
                return self._preupload(m.group(1), m.group(2))
            m = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/commit/(.+)", path)
            if m and self.command == "POST":
                return self._commit(m.group(1), m.group(2))
            m = re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/branch/(.+)", path)
            if m and self.command == "POST":
                return self._branch(m.group(1), m.group(2))
            m = re.fullmatch(r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
            if m and self.command in ("GET", "HEAD"):
                return self._resolve(m.group(1), m.group(2), m.group(3), head=head)
            self._body()
            self._error(404, f"not implemented by the stand-in: {self.command} {path}")

        def _create(self):
            req = json.loads(self._body() or b"{}")
            if not self._authorized():
                return self._error(401, "Invalid credentials in Authorization header")
            if req.get("type") != "dataset":
                return self._error(400, "the stand-in serves dataset repos only")
            repo_id = f"{req.get('organization') or 'tester'}/{req['name']}"
            with hub.lock:
                if repo_id in hub.repos:
                    return self._json(409, {"error": "You already created this dataset repo",
                                            "url": f"{hub.endpoint}/datasets/{repo_id}"})
                first = hashlib.sha1(f"init {repo_id}".encode()).hexdigest()
                hub.repos[repo_id] = Repo(private=req.get("visibility") == "private" or bool(req.get("private")),
                                          branches={"main": first},
                                          commits={first: {"parent": None, "files": {".gitattributes": b""},
                                                           "title": "initial commit"}})
            self._json(200, {"url": f"{hub.endpoint}/datasets/{repo_id}", "name": repo_id})

        def _validate_yaml(self):
            req = json.loads(self._body() or b"{}")
            m = re.match(r"---\n(.*?)\n---\n", req.get("content", ""), re.S)
            try:
                meta = yaml.safe_load(m.group(1)) if m else None
            except yaml.YAMLError as exc:
                return self._json(400, {"errors": [{"message": f"YAML: {exc}"}], "warnings": []})
            if not isinstance(meta, dict):
                return self._json(400, {"errors": [{"message": "no YAML metadata"}], "warnings": []})
            errors = []
            for c in meta.get("configs") or []:
                if not isinstance(c, dict) or "config_name" not in c or "data_files" not in c:
                    errors.append({"message": f"configs: invalid entry {c!r}"})
            self._json(400 if errors else 200, {"errors": errors, "warnings": []})

        def _info(self, repo_id: str, rev: str):
            repo = self._repo(repo_id, write=False)
            if repo is None:
                return
            sha = repo.resolve(rev)
            if sha is None:
                return self._error(404, f"Invalid rev id: {rev}", "RevisionNotFound")
            self._json(200, {"id": repo_id, "_id": repo_id, "sha": sha, "private": repo.private,
                             "lastModified": "2026-01-01T00:00:00.000Z", "tags": [],
                             "siblings": [{"rfilename": p} for p in sorted(repo.files(sha))]})

        def _tree(self, repo_id: str, rev: str, under: str, query: dict):
            repo = self._repo(repo_id, write=False)
            if repo is None:
                return
            files = repo.files(rev)
            if files is None:
                return self._error(404, f"Invalid rev id: {rev}", "RevisionNotFound")
            recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
            prefix = f"{under.strip('/')}/" if under.strip("/") else ""
            out, dirs = [], set()
            for p in sorted(files):
                if not p.startswith(prefix):
                    continue
                rest = p[len(prefix):]
                parts = rest.split("/")
                for i in range(1, len(parts) if recursive else min(2, len(parts))):
                    dirs.add(prefix + "/".join(parts[:i]))
                if recursive or len(parts) == 1:
                    out.append({"type": "file", "oid": blob_oid(files[p]), "size": len(files[p]), "path": p})
            out += [{"type": "directory", "oid": ZERO, "size": 0, "path": d} for d in sorted(dirs)]
            if prefix and not out:
                return self._error(404, f"{under}: no such path", "EntryNotFound")
            self._json(200, out)

        def _preupload(self, repo_id: str, rev: str):
            req = json.loads(self._body() or b"{}")
            repo = self._repo(repo_id, write=True)
            if repo is None:
                return
            files = repo.files(rev) or {}
            self._json(200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                                        "oid": blob_oid(files[f["path"]]) if f["path"] in files else None}
                                       for f in req.get("files", [])]})

        def _commit(self, repo_id: str, rev: str):
            n = int(self.headers.get("Content-Length") or 0)
            if hub.drop_commits:  # half the body read, then the connection is gone
                self.rfile.read(n // 2)
                hub.log.append((self.command, self.path, 0))
                self.close_connection = True
                self.connection.shutdown(2)
                return
            body = self.rfile.read(n)
            repo = self._repo(repo_id, write=True)
            if repo is None:
                return
            if hub.gate:
                hub._wait_gate()
            lines = [json.loads(x) for x in body.splitlines() if x.strip()]
            header = next(x["value"] for x in lines if x["key"] == "header")
            with hub.lock:
                head = repo.branches.get(rev)
                if head is None:
                    return self._error(404, f"Invalid rev id: {rev}", "RevisionNotFound")
                parent = header.get("parentCommit")
                if parent and parent != head:
                    return self._json(412, {"error": f"A commit has happened since. Please refresh and try again. "
                                                     f"(parent {parent[:8]} is not the head {head[:8]})"})
                files = dict(repo.commits[head]["files"])
                for x in lines:
                    if x["key"] == "file":
                        v = x["value"]
                        files[v["path"]] = base64.b64decode(v["content"]) if v.get("encoding") == "base64" \
                            else v["content"].encode()
                    elif x["key"] == "deletedFile":
                        files.pop(x["value"]["path"], None)
                    elif x["key"] in ("lfsFile", "deletedFolder"):
                        return self._error(400, f"the stand-in does not take {x['key']}")
                sha = hashlib.sha1(json.dumps([head, header.get("summary"), time.time_ns(),
                                               sorted((p, blob_oid(d)) for p, d in files.items())]).encode()).hexdigest()
                repo.commits[sha] = {"parent": head, "files": files, "title": header.get("summary")}
                repo.branches[rev] = sha
            self._json(200, {"success": True, "commitOid": sha,
                             "commitUrl": f"{hub.endpoint}/datasets/{repo_id}/commit/{sha}"})

        def _branch(self, repo_id: str, branch: str):
            req = json.loads(self._body() or b"{}")
            repo = self._repo(repo_id, write=True)
            if repo is None:
                return
            with hub.lock:
                if branch in repo.branches:
                    return self._error(409, f"Reference already exists: refs/heads/{branch}")
                start = repo.resolve(req.get("startingPoint") or "main")
                repo.branches[branch] = start
            self._json(200, {})

        def _resolve(self, repo_id: str, rev: str, name: str, head: bool):
            repo = self._repo(repo_id, write=False)
            if repo is None:
                return
            sha = repo.resolve(rev)
            if sha is None:
                return self._error(404, f"Invalid rev id: {rev}", "RevisionNotFound")
            data = repo.files(sha).get(name)
            if data is None:
                return self._error(404, f"Entry not found: {name}", "EntryNotFound")
            self._send(200, data, {"X-Repo-Commit": sha, "ETag": f'"{blob_oid(data)}"',
                                   "Content-Type": "application/octet-stream"}, head=head)

    return Handler
