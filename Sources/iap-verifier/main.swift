import IAPWorkerCLI

await WorkerEntry.verifier()
