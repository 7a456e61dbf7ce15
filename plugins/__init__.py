"""First-party Suanli provider plugins, each loaded through the ``suanli`` entry-point group."""
