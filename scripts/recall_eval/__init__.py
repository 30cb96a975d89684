"""`make eval`: recall's quality on the labelled set in eval/recall (recall@5, recall@10, nDCG@10 for the lexical
part alone, the semantic part alone and the blend), measured through the recall service itself."""
