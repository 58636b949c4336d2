From stdpp Require Export list.
