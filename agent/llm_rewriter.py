"""The LLM implementation of the rewrite role (agent.threads): one bounded structured call.

Like the other LLM roles (agent.llm_roles): the thread's earlier questions and the titles
their answers cited are data inside escaped elements, the wire schema bounds its one string,
and code checks the reply. The local rewriter goes first: a follow-up that already names its
subject and points back to nothing costs no call. A reply that is empty, or that states a
number no turn of the thread mentions (a guessed value, e.g. "...have 12 layers?"), is not
searched for: the guessed numbers are cut, and an empty result falls back to the local rewrite.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from agent import prompts
from agent.llm.candidates import _strip_new_numbers
from agent.llm.roles import ChatClient
from agent.llm.wire import Text
from agent.threads import HISTORY_TURNS, Rewrite, Turn

REWRITE_TASK = (
    "The last question of a conversation about research papers is a follow-up: it may refer back "
    "(\"it\", \"they\", \"what about X?\", \"and the decoder?\"). Rewrite it as ONE standalone search "
    "question that names what it asks about, taken from the earlier turns. Keep names and identifiers "
    "verbatim. Do not answer it and do not add any value (number, name) the conversation does not "
    "state. If it already stands on its own, return it unchanged."
)


class RewriteOut(BaseModel):
    standalone: Text(300)


def rewrite_messages(question: str, history: Sequence[Turn]) -> list[dict[str, str]]:
    turns = []
    for turn in history[-HISTORY_TURNS:]:
        titles = "".join(f"\n<cited>{prompts.escape_data(t)}</cited>" for t in turn.titles[:3])
        turns.append(f"<turn>\n<asked>{prompts.escape_data(turn.standalone)}</asked>{titles}\n</turn>")
    data = "<conversation>\n" + "\n".join(turns) + "\n</conversation>\n" + prompts.question_block(question)
    return prompts._messages(REWRITE_TASK, data)


class LLMRewriter:
    def __init__(self, client: ChatClient, *, local: Any = None) -> None:
        self.client = client
        self.local = local

    def rewrite(self, question: str, history: Sequence[Turn]) -> Rewrite:
        question = question.strip()
        if not history:
            return Rewrite(question=question)
        local = self.local.rewrite(question, history) if self.local is not None else None
        if local is not None and not local.changed:
            return local
        out, usage = self.client.structured(rewrite_messages(question, history), RewriteOut)
        context = " ".join([question, *(t.standalone for t in history), *(x for t in history for x in t.titles)])
        text = _strip_new_numbers(" ".join(out.standalone.split()), context)
        if not text:
            fallback = local or Rewrite(question=question)
            return Rewrite(question=fallback.question, changed=fallback.changed, usage=usage)
        return Rewrite(question=text, changed=text != question, usage=usage)
