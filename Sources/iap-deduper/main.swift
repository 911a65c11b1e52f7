import IAPCLI

await Entry.deduper()
