#include "traces/schema.h"

namespace accordion {

const std::vector<TableSpec>& TraceTables() {
  static const std::vector<TableSpec> tables = {
      {"meta", "key", {"key", "value"}},
      {"run", "id",
       {"id", "status", "synthetic", "model", "dataset", "train_samples", "scheme", "policy",
        "level_low", "level_high", "eta", "interval", "world_size", "backend", "device",
        "batch_size", "epochs_planned", "seed", "config_json", "versions_json", "started_utc",
        "finished_utc"}},
      {"layers", "layer_id",
       {"layer_id", "name", "shape", "numel", "compressible", "floats_dense", "floats_low",
        "floats_high"}},
      {"epochs", "epoch",
       {"epoch", "lr", "batch_size", "iterations", "critical", "model_grad_norm", "train_loss",
        "train_acc", "test_loss", "test_acc", "compute_s", "compress_s", "comm_s", "total_s",
        "floats_sent"}},
      {"epoch_layers", "epoch, layer_id",
       {"epoch", "layer_id", "grad_norm", "ratio", "critical", "level", "floats_sent"}},
      {"iterations", "epoch, iteration, rank",
       {"epoch", "iteration", "rank", "forward_s", "backward_s", "compress_s", "comm_s",
        "total_s"}},
      {"grad_ready", "epoch, iteration, rank, layer_id", {"epoch", "iteration", "rank", "layer_id", "offset_s"}},
      {"collectives", "epoch, iteration, rank, seq",
       {"epoch", "iteration", "rank", "seq", "op", "bucket", "tag", "bytes", "start_s",
        "duration_s"}},
      {"hessian", "epoch, block", {"epoch", "block", "eigenvalue", "iterations", "seconds"}},
  };
  return tables;
}

const std::string& TraceSchemaSql() {
  static const std::string sql = R"sql(
CREATE TABLE meta (
  key   TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
);
CREATE TABLE run (
  id             INTEGER PRIMARY KEY CHECK (id = 1),
  status         TEXT    NOT NULL,
  synthetic      INTEGER NOT NULL,
  model          TEXT    NOT NULL,
  dataset        TEXT    NOT NULL,
  train_samples  INTEGER NOT NULL,
  scheme         TEXT    NOT NULL,
  policy         TEXT    NOT NULL,
  level_low      REAL    NOT NULL,
  level_high     REAL    NOT NULL,
  eta            REAL    NOT NULL,
  interval       INTEGER NOT NULL,
  world_size     INTEGER NOT NULL,
  backend        TEXT    NOT NULL,
  device         TEXT    NOT NULL,
  batch_size     INTEGER NOT NULL,
  epochs_planned INTEGER NOT NULL,
  seed           INTEGER NOT NULL,
  config_json    TEXT    NOT NULL,
  versions_json  TEXT    NOT NULL,
  started_utc    TEXT    NOT NULL,
  finished_utc   TEXT
);
CREATE TABLE layers (
  layer_id     INTEGER PRIMARY KEY,
  name         TEXT    NOT NULL,
  shape        TEXT    NOT NULL,
  numel        INTEGER NOT NULL,
  compressible INTEGER NOT NULL,
  floats_dense REAL    NOT NULL,
  floats_low   REAL    NOT NULL,
  floats_high  REAL    NOT NULL
);
CREATE TABLE epochs (
  epoch           INTEGER PRIMARY KEY,
  lr              REAL    NOT NULL,
  batch_size      INTEGER NOT NULL,
  iterations      INTEGER NOT NULL,
  critical        INTEGER NOT NULL,
  model_grad_norm REAL    NOT NULL,
  train_loss      REAL    NOT NULL,
  train_acc       REAL    NOT NULL,
  test_loss       REAL    NOT NULL,
  test_acc        REAL    NOT NULL,
  compute_s       REAL    NOT NULL,
  compress_s      REAL    NOT NULL,
  comm_s          REAL    NOT NULL,
  total_s         REAL    NOT NULL,
  floats_sent     REAL    NOT NULL
);
CREATE TABLE epoch_layers (
  epoch       INTEGER NOT NULL,
  layer_id    INTEGER NOT NULL,
  grad_norm   REAL    NOT NULL,
  ratio       REAL,
  critical    INTEGER NOT NULL,
  level       REAL    NOT NULL,
  floats_sent REAL    NOT NULL,
  PRIMARY KEY (epoch, layer_id)
) WITHOUT ROWID;
CREATE TABLE iterations (
  epoch      INTEGER NOT NULL,
  iteration  INTEGER NOT NULL,
  rank       INTEGER NOT NULL,
  forward_s  REAL    NOT NULL,
  backward_s REAL    NOT NULL,
  compress_s REAL    NOT NULL,
  comm_s     REAL    NOT NULL,
  total_s    REAL    NOT NULL,
  PRIMARY KEY (epoch, iteration, rank)
) WITHOUT ROWID;
CREATE TABLE grad_ready (
  epoch     INTEGER NOT NULL,
  iteration INTEGER NOT NULL,
  rank      INTEGER NOT NULL,
  layer_id  INTEGER NOT NULL,
  offset_s  REAL    NOT NULL,
  PRIMARY KEY (epoch, iteration, rank, layer_id)
) WITHOUT ROWID;
CREATE TABLE collectives (
  epoch      INTEGER NOT NULL,
  iteration  INTEGER NOT NULL,
  rank       INTEGER NOT NULL,
  seq        INTEGER NOT NULL,
  op         TEXT    NOT NULL,
  bucket     INTEGER NOT NULL,
  tag        TEXT    NOT NULL,
  bytes      INTEGER NOT NULL,
  start_s    REAL    NOT NULL,
  duration_s REAL    NOT NULL,
  PRIMARY KEY (epoch, iteration, rank, seq)
) WITHOUT ROWID;
CREATE TABLE hessian (
  epoch      INTEGER NOT NULL,
  block      TEXT    NOT NULL,
  eigenvalue REAL    NOT NULL,
  iterations INTEGER NOT NULL,
  seconds    REAL    NOT NULL,
  PRIMARY KEY (epoch, block)
) WITHOUT ROWID;
)sql";
  return sql;
}

}  // namespace accordion
