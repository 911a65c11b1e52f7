import IAPWorkerCLI

await WorkerEntry.webhook()
