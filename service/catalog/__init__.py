"""The catalog: what can be rented, where, at what price, and from which source.

Provider plugins feed it (:mod:`service.catalog.models` is their vocabulary); the
aggregate (:mod:`service.catalog.aggregate`) turns every provider into one immutable
snapshot of offers with operator overrides, live prices and the price model's estimates
layered in. The planner, the offer listing and the catalog routes read that snapshot.
Import each name from the module that defines it: this package re-exports nothing.
"""
