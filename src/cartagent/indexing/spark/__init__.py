"""The Spark build engine: ``SparkEngine`` reads, validates, fingerprints and embeds a catalog in
Spark executors and streams :class:`~cartagent.indexing.prepared.PreparedBatch` es to the driver.

For the same file it gives what ``load_products`` and ``content_hash`` give: the same products in
the same order, the same hashes and the same problems at the same lines. Spark reads the file
itself (so a cluster reads it from shared storage):

* **JSON Lines**: Spark's text reader, split at ``\\n`` only; a counting job in the JVM gives
  each partition its first line number, and finds the lines that are not UTF-8.
* **CSV**: text too; a quoted cell may span lines and partitions (see the CSV section). Rows,
  one per variant, are grouped by product id across partitions (``groupByKey``), and each
  product is built by the local loader's own row code.
* **Parquet**: a row's line is its 1-based row number (``_metadata.row_index``); files without
  a ``variants`` column are grouped as CSV rows are. A file Spark cannot open is a problem at
  line 0; one that fails part-way fails the Spark job.
* **JSON** (a list or an object of products): a document cannot be split, so one task parses
  the whole file, which gives each product's exact line; validation, hashing and embedding
  then run spread over the cluster.

Bad rows come back as ``RowProblem`` s and reach ``on_problem`` in line order, between batches.
The driver rebuilds each product from its JSON and reports a second product with an id it has
already streamed (JSON, JSON Lines, nested Parquet), keeping one id per product to do so.

Embedding runs in executors, for the products whose hash is wanted. A picklable embedder (such
as ``cartagent.testing.HashingEmbedder``) is broadcast; a ``MiniLMEmbedder`` travels as a recipe
(threads, batch size, model folder) and is built once per Python worker, so executors need the
MiniLM package. ``wanted`` is a driver-side callable: the hashes are first collected to the
driver (one more job, 32 characters a product), ``wanted`` is asked about each, and the wanted
set, or its complement when smaller, is broadcast. Unwanted products get zero vectors.

Every stage finishes in parallel before the first batch: the records are persisted (memory,
spilling to disk) and counted, then streamed to the driver a partition at a time. Importing
this module needs PySpark (``pip install 'cartagent[spark]'``).

The engine is in ``_engine``; each source format has a module (``_jsonl``, ``_json_document``,
``_csv_records``, ``_parquet``, with ``_flat_rows`` for the formats of one variant a row),
``_sources`` holds what they share and ``_stream`` embeds and streams the records.
"""

from __future__ import annotations

from ._engine import SparkEngine

__all__ = ["SparkEngine"]
