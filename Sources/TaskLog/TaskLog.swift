// The one module an app imports. `import TaskLog` brings exactly what an app needs: opening a
// store, the task values, queries and edits, changes, folder and HTTP sync, log replay and the
// typed errors. Codecs, the segment format and replication plumbing stay in their modules.

// Opening a store, reading and writing.
@_exported import class TaskStore.TaskStore
@_exported import struct TaskStore.NewTask
@_exported import struct TaskStore.StoreChange
@_exported import struct TaskStore.StoreStatus
@_exported import struct TaskStore.StoreWarning
@_exported import enum TaskStore.StoreError
@_exported import struct TaskStore.UndoneChange

// The task values and queries.
@_exported import struct TaskModel.TaskID
@_exported import struct TaskModel.TaskItem
@_exported import enum TaskModel.FieldWrite
@_exported import enum TaskModel.Due
@_exported import struct TaskModel.TaskQuery
@_exported import struct TaskModel.TaskState
@_exported import struct TaskModel.Commit
@_exported import enum TaskModel.TaskOperation
@_exported import enum TaskModel.PlanningKey
@_exported import struct TaskModel.RecurrenceRule
@_exported import struct TaskModel.TaskTree

// Dates as people type them, quick add, today and urgency.
@_exported import enum TaskPlanning.DateInput
@_exported import enum TaskPlanning.QuickAdd
@_exported import enum TaskPlanning.QuickAddError
@_exported import enum TaskPlanning.Urgency
@_exported import struct TaskPlanning.TodayView

// Clocks and replicas, as changes and status report them.
@_exported import struct CRDTCore.Timestamp
@_exported import struct CRDTCore.ReplicaID
@_exported import struct CRDTCore.VersionVector

// Sync through a shared folder or with an HTTP peer, and any other transport's segments.
@_exported import struct TaskSync.FolderSync
@_exported import struct TaskSync.SyncReport
@_exported import enum TaskSync.SyncError
@_exported import struct TaskSync.FolderKeyring
@_exported import struct TaskSync.KeyCost
@_exported import enum TaskSync.EncryptionError
@_exported import enum TaskSync.SealError
@_exported import struct TaskStore.ResolvedFork
@_exported import struct TaskStore.Integration
@_exported import struct TaskSyncHTTP.HTTPSync
@_exported import enum TaskSyncHTTP.HTTPClientError

// Replaying logs in tests.
@_exported import struct TaskStore.LogReplay
