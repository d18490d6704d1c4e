"""Pure transforms: page bytes -> Document -> Draft. No network, disk, clock or Prefect."""
