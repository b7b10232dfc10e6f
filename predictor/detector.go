package predictor

import (
	"slices"
	"strings"
)

// Detection and segmentation codebases (OpenMMLab's mmdet and mmseg,
// detectron2, torchvision's detection models) name the model in the
// config file's name, as architecture, backbone and neck, before the
// schedule and data set: mask_rcnn_R_50_FPN_3x.yaml,
// faster-rcnn_r50_fpn_1x_coco.py, mask2former_swin-s-p4-w7-224_8xb2-lsj-50e_coco.py,
// upernet_convnext_tiny_fp16_512x512_160k_ade20k.py. A person names the
// model by the first three: mask-rcnn-r50-fpn.

// detectorArchs are the architectures, each as the words it splits into.
var detectorArchs = [][]string{
	{"cascade", "mask", "rcnn"}, {"faster", "rcnn"}, {"mask", "rcnn"}, {"cascade", "rcnn"}, {"keypoint", "rcnn"},
	{"sparse", "rcnn"}, {"grid", "rcnn"}, {"libra", "faster", "rcnn"}, {"deformable", "detr"}, {"conditional", "detr"},
	{"dab", "detr"}, {"dn", "detr"}, {"co", "dino"}, {"panoptic", "fpn"}, {"point", "rend"},
	{"fasterrcnn"}, {"maskrcnn"}, {"retinanet"}, {"fcos"}, {"atss"}, {"yolox"}, {"detr"}, {"dino"}, {"rtmdet"},
	{"mask2former"}, {"maskformer"}, {"solo"}, {"solov2"}, {"htc"}, {"centernet"}, {"queryinst"}, {"upernet"},
	{"deeplabv3"}, {"deeplabv3plus"}, {"pspnet"}, {"pointrend"}, {"vfnet"}, {"tood"}, {"gfl"}, {"reppoints"},
	{"yolact"}, {"rtmw"}, {"rtmpose"}, {"rtmo"}, {"vitpose"}, {"ssd300"}, {"ssd512"}, {"ssdlite"}, {"fpn"}, {"rtdetr"}, {"condinst"}, {"boxinst"}, {"oneformer"},
}

// detectorAbbrevs are architectures' short names, each read as the
// architecture a person names: inference_frcnn.py runs a Faster R-CNN.
var detectorAbbrevs = map[string]string{"frcnn": "faster-rcnn", "mrcnn": "mask-rcnn"}

// detectorNeedsBackbone are the architectures whose name alone is also a
// common word or a family word (a job named htc_run, a dino model): they
// count only with a backbone or variant after them.
var detectorNeedsBackbone = set("fpn", "detr", "dino", "solo", "solov2", "htc", "gfl", "tood", "fcos", "atss",
	"ssdlite", "ssd300", "ssd512")

// detectorNecks are the necks that follow a backbone in a config's name.
var detectorNecks = map[string]bool{"fpn": true, "pafpn": true, "dc5": true, "c4": true, "nasfpn": true, "bifpn": true}

// detectorBackbones are the backbone families that may follow an
// architecture; each takes a variant word after it (swin-s, convnext_tiny).
var detectorBackbones = []string{"resnet", "resnext", "swin", "convnext", "vit", "hrnetv2p", "hrnet", "regnetx",
	"mobilenetv2", "mobilenet", "darknet", "cspdarknet", "cspnext", "efficientnet", "res2net", "pvtv2", "pvt",
	"mit", "beit", "internimage", "r", "x"}

// detectorIn reads the most specific detection model a name's words
// spell, the file's own name over its directory's (configs/faster_rcnn/
// faster-rcnn_r50_fpn_1x_coco.py is faster-rcnn-r50-fpn), or "".
func detectorIn(toks []string) string {
	best := ""
	for i := range toks {
		if m := detectorModel(toks, i); m != "" && strings.Count(m, "-") >= strings.Count(best, "-") {
			best = m
		}
	}
	return best
}

// detectorModel reads a detection or segmentation model from the words of
// a name starting at toks[i]: its architecture, then a backbone and a neck
// where they follow ("mask-rcnn-r50-fpn", "mask2former-swin-s"), or "".
func detectorModel(toks []string, i int) string {
	var arch []string
	for _, a := range detectorArchs {
		if i+len(a) <= len(toks) && slices.Equal(toks[i:i+len(a)], a) && len(a) > len(arch) {
			arch = a
		}
	}
	parts := append([]string(nil), arch...)
	if full, ok := detectorAbbrevs[toks[i]]; ok && arch == nil {
		arch, parts = toks[i:i+1], []string{full}
	}
	if arch == nil {
		return ""
	}
	j := i + len(arch)
	if b, n := detectorBackbone(toks[j:]); n > 0 {
		parts = append(parts, b)
		j += n
	} else if j < len(toks) && (variantWords[toks[j]] || toks[j] == "m" || toks[j] == "x") {
		parts = append(parts, toks[j]) // yolox_s, rtmdet_tiny
		j++
	}
	if j < len(toks) && detectorNecks[toks[j]] && parts[len(parts)-1] != toks[j] {
		parts = append(parts, toks[j])
	}
	if len(parts) == 1 && detectorNeedsBackbone[arch[0]] {
		return "" // solo, htc or fpn alone may be any word of a job's name
	}
	return strings.Join(parts, "-")
}

// detectorBackbone reads a backbone from the start of toks: r50, r101,
// x101-32x4d, R_50 (detectron2), resnet50, swin-s, convnext_tiny, and says
// how many words it took.
func detectorBackbone(toks []string) (string, int) {
	if len(toks) == 0 {
		return "", 0
	}
	t := toks[0]
	for _, b := range detectorBackbones {
		if !strings.HasPrefix(t, b) {
			continue
		}
		rest := t[len(b):]
		switch {
		case (b == "r" || b == "x") && rest == "" && len(toks) > 1 && isDigits(toks[1]):
			name, n := t+toks[1], 2 // detectron2's R_50, X_101
			if len(toks) > n && groupWidth(toks[n]) {
				name, n = name+"-"+toks[n], n+1
			}
			return name, n
		case (b == "r" || b == "x") && isDigits(rest) && rest != "":
			if len(toks) > 1 && groupWidth(toks[1]) {
				return t + "-" + toks[1], 2 // x101-32x4d
			}
			return t, 1
		case b == "r" || b == "x":
			continue
		case rest != "" && versionTail(rest):
			return t, 1 // resnet50, hrnetv2p-w32 below
		case rest == "" && len(toks) > 1 && (variantWords[toks[1]] || strings.HasPrefix(toks[1], "w") && isDigits(toks[1][1:])):
			return t + "-" + toks[1], 2 // swin-s, convnext_tiny, hrnetv2p_w32
		case rest == "":
			return t, 1
		}
	}
	return "", 0
}

// groupWidth reports whether a word is a ResNeXt's groups and width: 32x4d.
func groupWidth(w string) bool {
	a, b, ok := strings.Cut(strings.TrimSuffix(w, "d"), "x")
	return ok && strings.HasSuffix(w, "d") && isDigits(a) && isDigits(b)
}
