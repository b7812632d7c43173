"""Batches: one lifecycle over a folder of submissions, its journal, outputs, shards
and Dask."""
