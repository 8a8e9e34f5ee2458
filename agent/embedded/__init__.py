"""The embedded language model: llama.cpp's `llama-server` on 127.0.0.1 with a GGUF model
that registry packages ship (docs/llm.md, "The embedded model").

- `catalog`: the shipped models, their packages, sizes, checksums and licences; assembling
  one GGUF file from a model's installed packages.
- `build`: `llama-server` compiled once from the llama.cpp source vendored in the
  `llama-cpp-python` sdist, into a cache folder keyed by its version.
- `server`: the server's command line, start/stop and health check.

The portal talks to the server through the ordinary OpenAI-compatible client
(`PORTAL_LLM_BACKEND=embedded` only fills in its base URL and model name), so nothing
else in the code knows which model answers.

Django-free: settings and the `llm` management command pass in what they need.
"""
