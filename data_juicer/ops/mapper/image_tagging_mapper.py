from data_juicer.models.tagging import check_ram
from data_juicer.ops.base import Mapper
from data_juicer.ops.common.ram_tagging import tag_rows
from data_juicer.ops.common.vision import load_images
from data_juicer.ops.registry import OPERATORS
from data_juicer.utils.constant import InterVars, MetaKeys


@OPERATORS.register_module("image_tagging_mapper")
class ImageTaggingMapper(Mapper):
    """Tags each image with Recognize Anything (RAM++, ``ram_plus_swin_large_14m.pth``): a list
    of tags per image (most frequent first) in the sample's meta under ``tag_field_name``;
    ``[[]]`` for a sample without images. Rows already tagged are left as they are.

    **Model code not bundled**: no registry package carries recognize-anything, so this op
    calls the model through a plug-in of kind ``ram`` (``data_juicer/models/tagging.py`` shows
    one; ``data_juicer/models/plugins.py`` says how to register it). Everything around the model
    is here: the weights found offline, RAM's 384x384 ImageNet-normalised input, every image of
    a batch tagged in one call, the tags ordered as Data-Juicer orders them.
    """

    _accelerator = "cuda"
    modality = "image"
    requires = ("pillow", "numpy")
    uses_model = True
    uses = (InterVars.loaded_images,)

    def __init__(self, tag_field_name: str = MetaKeys.image_tags, **kwargs):
        """
        :param tag_field_name: meta field receiving the tags (``image_tags``)
        """
        kwargs.setdefault("memory", kwargs.get("mem_required") or "9GB")
        super().__init__(**kwargs)
        self.tag_field_name = tag_field_name
        self.ram_path = check_ram(who=self.name)

    @classmethod
    def check_models(cls, params: dict) -> list[str]:
        return [check_ram(who=getattr(cls, "_name", "") or cls.__name__)]

    def process_batched(self, samples):
        col = samples.get(self.image_key)

        def media(i):
            if col is None or not col[i]:
                return None
            loaded = load_images(self, samples, i)
            return [[loaded[p]] for p in col[i]]

        return tag_rows(self, samples, media, self.tag_field_name)


