import IAPCLI

await Entry.intake()
