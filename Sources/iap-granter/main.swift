import IAPWorkerCLI

await WorkerEntry.granter()
