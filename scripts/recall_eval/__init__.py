"""`make eval`: recall's quality on the labelled set in eval/recall (recall@5, recall@10, nDCG@10 for the lexical
part alone, the semantic part alone and the blend, and what storing vectors as int8 costs against float vectors),
measured through the recall service itself."""
