import IAPWorkerCLI

await WorkerEntry.deduper()
