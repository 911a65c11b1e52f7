import IAPCLI

await Entry.granter()
