// The one module an app imports: `import TaskLog` brings the store, the task values, queries,
// folder and HTTP sync, log replay and the typed errors.
@_exported import CRDTCore
@_exported import TaskModel
@_exported import TaskStore
@_exported import TaskSync
@_exported import TaskSyncHTTP
