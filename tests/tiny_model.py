"""A small embedding model the tests build themselves, so that the semantic code paths (the
real loading code, fastembed, onnxruntime, the int8 copy) run on a machine that has no model
and reaches no hub.

It has all-MiniLM-L6-v2's interface (the files fastembed loads, 384-dimension rows, a BERT
WordPiece tokenizer) and a trivial network: token embeddings through one matrix, mean-pooled
by fastembed. Texts that share words come out close, which is all the tests of plumbing
need; the tests of the real model's quality skip without it (`needs_real_model`).
"""

from __future__ import annotations

import json
import string
from pathlib import Path

DIM = 384
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = [
    "the",
    "a",
    "an",
    "and",
    "or",
    "of",
    "to",
    "in",
    "on",
    "for",
    "with",
    "is",
    "are",
    "was",
    "be",
    "it",
    "this",
    "that",
    "we",
    "our",
    "you",
    "use",
    "used",
    "database",
    "sqlite",
    "postgres",
    "migration",
    "migrations",
    "lock",
    "locked",
    "wal",
    "mode",
    "index",
    "query",
    "recall",
    "memory",
    "memories",
    "checkpoint",
    "session",
    "hook",
    "hooks",
    "test",
    "tests",
    "pytest",
    "retry",
    "payment",
    "invoice",
    "ledger",
    "job",
    "nightly",
    "office",
    "plants",
    "water",
    "cache",
    "login",
    "redirect",
    "cookie",
    "token",
    "key",
    "secret",
    "file",
    "files",
    "src",
    "path",
    "project",
    "model",
    "vector",
    "search",
    "fast",
    "slow",
    "decided",
    "keep",
    "never",
    "always",
    "rotate",
    "signing",
    "keys",
    "deploy",
    "billing",
    "worker",
    "staging",
    "while",
    "uploads",
    "unrelated",
    "archives",
    "then",
    "long",
    "pasted",
    "log",
    "line",
    "lunch",
    "served",
    "noon",
    "fridays",
    "runs",
    "at",
]


# For the multilingual stand-in: words of other languages, each embedded exactly as its
# English word is (a real multilingual model puts translations near each other).
TRANSLATIONS = {
    "datenbank": "database", "sperre": "lock", "gesperrt": "locked", "zahlung": "payment",
    "rechnung": "invoice", "wiederholung": "retry", "schlüssel": "key", "données": "database",
    "verrou": "lock", "paiement": "payment",
    "facture": "invoice", "nächtlich": "nightly", "nocturne": "nightly", "immer": "always",
    "niemals": "never", "toujours": "always", "jamais": "never", "die": "the", "der": "the",
    "ist": "is", "est": "is", "la": "the", "le": "the", "de": "of", "des": "of", "wird": "is",
}  # fmt: skip
MULTILINGUAL_SPECIAL = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def build(folder: Path) -> Path:
    """Write model.onnx and the tokenizer files into `folder`; return it."""
    return _build(folder, SPECIAL, WORDS, {}, "model.onnx")


def build_multilingual(folder: Path) -> Path:
    """The same network with paraphrase-multilingual-MiniLM-L12-v2's interface: its file
    name (model_optimized.onnx), XLM-R's special tokens, and words of German and French that
    come out where their English ones do."""
    return _build(folder, MULTILINGUAL_SPECIAL, [*WORDS, *TRANSLATIONS], TRANSLATIONS,
                  "model_optimized.onnx")  # fmt: skip


def _build(
    folder: Path, special: list[str], words: list[str], same: dict[str, str], model_file: str
) -> Path:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    folder.mkdir(parents=True, exist_ok=True)
    pieces = list(string.ascii_lowercase + string.digits + string.punctuation)
    tokens = [*special, *dict.fromkeys(words), *pieces, *(f"##{p}" for p in pieces)]
    vocab = {token: i for i, token in enumerate(tokens)}
    pad, unk, cls, sep, mask = (
        (special[1], special[3], special[0], special[2], special[4])
        if (special is MULTILINGUAL_SPECIAL)
        else ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
    )
    tokenizer = Tokenizer(
        models.WordPiece(vocab=vocab, unk_token=unk, max_input_chars_per_word=100)
    )
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=False)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}",
        pair=f"{cls} $A {sep} $B:1 {sep}:1",
        special_tokens=[(cls, vocab[cls]), (sep, vocab[sep])],
    )
    tokenizer.decoder = decoders.WordPiece()
    tokenizer.save(str(folder / "tokenizer.json"))
    specials = {"unk_token": unk, "sep_token": sep, "pad_token": pad,
                "cls_token": cls, "mask_token": mask}  # fmt: skip
    (folder / "special_tokens_map.json").write_text(json.dumps(specials), "utf-8")
    (folder / "tokenizer_config.json").write_text(
        json.dumps({**specials, "do_lower_case": True, "model_max_length": 512,
                    "tokenizer_class": "BertTokenizer"}), "utf-8"
    )  # fmt: skip
    (folder / "config.json").write_text(
        json.dumps({"architectures": ["BertModel"], "hidden_size": DIM, "model_type": "bert",
                    "pad_token_id": vocab[pad], "vocab_size": len(vocab),
                    "max_position_embeddings": 512}), "utf-8"
    )  # fmt: skip

    rng = np.random.default_rng(7)
    table = rng.standard_normal((len(vocab), DIM)).astype(np.float32)
    table[vocab[pad]] = 0.0  # padding contributes nothing
    for word, english in same.items():
        table[vocab[word]] = table[vocab[english]]
    weights = (rng.standard_normal((DIM, DIM)) / np.sqrt(DIM)).astype(np.float32)
    ids = ["input_ids", "attention_mask", "token_type_ids"]
    graph = helper.make_graph(
        [
            helper.make_node("Gather", ["table", "input_ids"], ["tokens"]),
            helper.make_node("MatMul", ["tokens", "weights"], ["last_hidden_state"]),
        ],
        "tiny",
        [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"]) for n in ids],
        [
            helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", DIM]
            )
        ],  # fmt: skip
        initializer=[
            numpy_helper.from_array(table, "table"),
            numpy_helper.from_array(weights, "weights"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / model_file))
    return folder
