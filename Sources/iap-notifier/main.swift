import IAPWorkerCLI

await WorkerEntry.notifier()
