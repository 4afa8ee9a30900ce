import type { Counter } from "./counter.ts";
import type { Gauge } from "./gauge.ts";
import { type Histogram, LATENCY_BUCKETS } from "./histogram.ts";
import { Registry } from "./registry.ts";

/** The metrics a running Chronicle exposes on `GET /metrics`. */
export interface ChronicleMetrics {
  /** `chronicle_iterations_total`: iterations recorded by this process. */
  iterations: Counter;
  /** `chronicle_bytes_stored`: bytes of content the store's iterations reference. */
  bytesStored: Gauge;
  /** `chronicle_replicas_connected`: replicas connected to this master. */
  replicasConnected: Gauge;
  /** `chronicle_replica_lag_sequences{sandbox_id}`: master sequence minus the replica's acked one. */
  replicaLag: Gauge<"sandbox_id">;
  /** `chronicle_writebacks_total{result="accepted"|"rejected"}`: write-back entries decided. */
  writebacks: Counter<"result">;
  /** `chronicle_conflicts_total`: write-backs rejected as conflicts, or conflicts a replica kept. */
  conflicts: Counter;
  /** `chronicle_fetch_latency_seconds`: time to fetch one content from the master. */
  fetchLatency: Histogram;
  /** `chronicle_sequence`: this workspace's highest sequence. */
  sequence: Gauge;
  /** `chronicle_objectstore_queued_objects`: contents waiting to be uploaded to the bucket. */
  objectStoreQueuedObjects: Gauge;
  /** `chronicle_objectstore_queued_bytes`: their bytes. */
  objectStoreQueuedBytes: Gauge;
  /** `chronicle_objectstore_uploaded_bytes_total`: bytes uploaded since the process started. */
  objectStoreUploadedBytes: Counter;
  /** `chronicle_objectstore_upload_failures_total`: failed uploads since the process started. */
  objectStoreFailures: Counter;
  /** `chronicle_objectstore_upload_bytes_per_second`: upload rate of the last pass. */
  objectStoreRate: Gauge;
  /** `chronicle_heap_collections_total`: V8 heap collections the heap keeper made. */
  heapCollections: Counter;
  /** `chronicle_heap_collection_seconds_total`: their total time. */
  heapCollectionSeconds: Counter;
  /** `chronicle_heap_keeper_running`: 1 while the heap keeper runs, else 0. */
  heapKeeperRunning: Gauge;
}

/**
 * Registers Chronicle's metrics in a registry.
 *
 * @param registry Where to register them.
 * @returns The metrics, to update where things happen.
 * @throws {TypeError} When the registry already holds one of them.
 */
export function createChronicleMetrics(registry: Registry): ChronicleMetrics {
  const metrics: ChronicleMetrics = {
    iterations: registry.counter({
      name: "chronicle_iterations_total",
      help: "Iterations recorded by this process.",
    }),
    bytesStored: registry.gauge({
      name: "chronicle_bytes_stored",
      help: "Bytes of content referenced by the store's iterations.",
    }),
    replicasConnected: registry.gauge({
      name: "chronicle_replicas_connected",
      help: "Replicas connected to this master.",
    }),
    replicaLag: registry.gauge<"sandbox_id">({
      name: "chronicle_replica_lag_sequences",
      help: "Master sequence minus the sequence each replica has acknowledged.",
      labelNames: ["sandbox_id"],
    }),
    writebacks: registry.counter<"result">({
      name: "chronicle_writebacks_total",
      help: "Write-back entries decided by the master, by result.",
      labelNames: ["result"],
    }),
    conflicts: registry.counter({
      name: "chronicle_conflicts_total",
      help: "Write-backs rejected as conflicts.",
    }),
    fetchLatency: registry.histogram({
      name: "chronicle_fetch_latency_seconds",
      help: "Seconds to fetch one content from the master.",
      buckets: LATENCY_BUCKETS,
    }),
    sequence: registry.gauge({
      name: "chronicle_sequence",
      help: "Highest sequence of this workspace.",
    }),
    objectStoreQueuedObjects: registry.gauge({
      name: "chronicle_objectstore_queued_objects",
      help: "Contents waiting to be uploaded to the object store.",
    }),
    objectStoreQueuedBytes: registry.gauge({
      name: "chronicle_objectstore_queued_bytes",
      help: "Bytes of the contents waiting to be uploaded to the object store.",
    }),
    objectStoreUploadedBytes: registry.counter({
      name: "chronicle_objectstore_uploaded_bytes_total",
      help: "Bytes uploaded to the object store since the process started.",
    }),
    objectStoreFailures: registry.counter({
      name: "chronicle_objectstore_upload_failures_total",
      help: "Failed uploads to the object store since the process started.",
    }),
    objectStoreRate: registry.gauge({
      name: "chronicle_objectstore_upload_bytes_per_second",
      help: "Upload rate to the object store over its last pass.",
    }),
    heapCollections: registry.counter({
      name: "chronicle_heap_collections_total",
      help: "Collections of the V8 heap's garbage made before it piled up (not V8's own).",
    }),
    heapCollectionSeconds: registry.counter({
      name: "chronicle_heap_collection_seconds_total",
      help: "Seconds spent in those collections.",
    }),
    heapKeeperRunning: registry.gauge({
      name: "chronicle_heap_keeper_running",
      help: "1 while the heap keeper runs (V8's gc() is exposed: --expose-gc), else 0.",
    }),
  };
  // Both results are always present, so a rate() over either starts from 0.
  metrics.writebacks.inc({ result: "accepted" }, 0);
  metrics.writebacks.inc({ result: "rejected" }, 0);
  return metrics;
}

/** The process-wide registry `GET /metrics` serves. */
export const defaultRegistry: Registry = new Registry();

/** Chronicle's metrics in {@linkcode defaultRegistry}. */
export const metrics: ChronicleMetrics = createChronicleMetrics(defaultRegistry);
