from data_juicer.ops.deduplicator.document_minhash_deduplicator_with_uid import DocumentMinhashDeduplicatorWithUid
from data_juicer.ops.deduplicator.ray_bts_minhash_deduplicator import RayBTSMinhashDeduplicator
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import HashKeys


@OPERATORS.register_module("ray_bts_minhash_deduplicator_with_uid")
class RayBTSMinhashDeduplicatorWithUid(RayBTSMinhashDeduplicator):
    """Removes near-duplicate documents with MinHash LSH on Ray, keeping the smallest integer
    ``__dj__uid`` of each cluster (as ``document_minhash_deduplicator_with_uid``, which it runs
    as on the default executor): for incremental dedup, give the data to keep smaller uids.
    Bucket tables are sharded over Ray actors as in ``ray_bts_minhash_deduplicator``.
    """

    order_key = HashKeys.uid
    _uids = DocumentMinhashDeduplicatorWithUid._uids
    process = DocumentMinhashDeduplicatorWithUid.process

    def run_ray(self, ds):
        if HashKeys.uid not in ds.schema().names:
            raise ValueError(f"{self.name}: the dataset has no '{HashKeys.uid}' column; add a unique integer uid "
                             "to each sample, or use ray_bts_minhash_deduplicator")
        return super().run_ray(ds)
