"""The Redis-style answer on a corpus the extractors were not written against.

Only the documented phrasings and name variants are used: relation verbs from settings.yaml,
names in Title Case, lower case, kebab-case and CamelCase, leading articles, lists of objects.
"""

from __future__ import annotations

import json

from workbench.cli import main

CORPUS = {
    "web/checkout.md": "---\ntitle: Checkout\n---\n# Checkout\n\nThe checkout page depends on the Payment Gateway.\n\n"
                       "Customers reach it from the basket.\n",
    "payments/gateway.md": "# Payment gateway\n\nThe payment-gateway relies on the fraud cache.\n\n"
                           "It was rewritten in 2023 for lower latency.\n",
    "incidents/2024-03-fraud.md": "# Fraud cache incident\n\nPaymentGateway depends on the fraud cache.\n\n"
                                  "During the incident every payment timed out.\n",
    "infra/memcached.md": "# Memcached\n\nThe fraud cache is backed by Memcached.\n\nMemcached runs on Kubernetes.\n",
    "catalog/catalog.md": "The catalog service uses PostgreSQL and Elasticsearch.\n\n"
                          "The inventory worker reads from Kafka, writes to S3 and calls the catalog service.\n",
    "teams.md": "The Payments team owns the payment gateway.\n\nThe fraud cache is owned by the Risk team.\n",
    "chat.jsonl": '{"role": "@lee", "content": "is memcached healthy?", "time": "2024-03-02T10:00:00Z"}\n'
                  '{"role": "@kim", "content": "Memcached is fine, the fraud cache is warm.", "time": "2024-03-02T10:01:00Z"}\n',
}


def test_impact_on_an_unseen_corpus_gives_the_cited_chain_and_survivors(tmp_path, capsys, monkeypatch, embedder):
    corpus = tmp_path / "shop"
    for name, text in CORPUS.items():
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_text(text, encoding="utf-8")
    ws = tmp_path / "ws"
    monkeypatch.setattr("workbench.workspace.workspace.embedder_from_settings", lambda settings: embedder)
    assert main(["--workspace", str(ws), "ingest", str(corpus), "--json"]) == 0
    capsys.readouterr()

    assert main(["--workspace", str(ws), "impact", "memcached", "--json"]) == 0
    impact = json.loads(capsys.readouterr().out)
    assert impact["failed"] == "Memcached"
    by_entity = {item["entity"].lower(): item for item in impact["impacted"]}
    assert list(by_entity) == ["fraud cache", "payment gateway", "checkout page"]
    chain = by_entity["checkout page"]
    assert chain["path"][0] == "Memcached" and chain["path"][-1].lower() == "checkout page"
    hops = [(h["source"].lower(), h["relation"], h["target"].lower()) for h in chain["hops"]]
    assert hops == [("fraud cache", "backed_by", "memcached"), ("payment gateway", "depends_on", "fraud cache"),
                    ("checkout page", "depends_on", "payment gateway")]
    corroborated = chain["hops"][1]
    assert corroborated["weight"] == 2 and len(corroborated["chunks"]) == 2
    assert sorted(corroborated["documents"]) == ["shop/incidents/2024-03-fraud.md", "shop/payments/gateway.md"]
    assert all(h["chunks"] for h in chain["hops"])
    survivors = {s.lower() for s in impact["survivors"]}
    assert {"catalog service", "inventory worker", "postgresql", "elasticsearch", "kafka", "s3", "kubernetes"} <= survivors
    assert not survivors & set(by_entity)

    assert main(["--workspace", str(ws), "merges", "--json"]) == 0
    merges = {m["canonical"].lower(): {f["form"] for f in m["surface_forms"]} for m in json.loads(capsys.readouterr().out)}
    assert {"Payment Gateway", "payment-gateway", "PaymentGateway", "payment gateway"} <= merges["payment gateway"]
