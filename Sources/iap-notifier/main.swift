import IAPCLI

await Entry.notifier()
