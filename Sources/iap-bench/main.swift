import IAPCLI

await Entry.bench()
