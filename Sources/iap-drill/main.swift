import IAPCLI

await Entry.drill()
