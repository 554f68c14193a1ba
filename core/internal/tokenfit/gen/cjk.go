package main

import (
	"bytes"
	"fmt"
	"strings"
)

// CJK data: Chinese names, addresses and phrases in records and tables.

// CJK data: people's names, addresses, product titles and short reviews in
// records and tables. Names and many titles are free combinations of
// characters rather than dictionary words, so they tokenize less densely
// than running prose.
var (
	zhSurnames = []rune("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤")
	zhGiven    = []rune("伟芳娜秀英敏静丽强磊军洋勇艳杰娟涛明超霞平刚桂华建国志红玉兰文辉鹏宇浩婷雪琳欣怡梓涵子轩晨阳思远嘉豪俊峰晓燕佳丽春梅海波金凤颖慧君")
	zhCities   = []string{"北京市", "上海市", "广州市", "深圳市", "杭州市", "成都市", "武汉市", "西安市", "南京市", "重庆市", "苏州市", "天津市", "长沙市", "郑州市", "青岛市", "厦门市"}
	zhRoads    = []rune("人民中山解放建设和平新华文化胜利东风长江黄河光明朝阳幸福团结青年")
	zhWords    = strings.Fields("手机 电脑 耳机 充电器 保温杯 背包 键盘 鼠标 显示器 路由器 台灯 运动鞋 外套 衬衫 茶叶 咖啡 牛奶 坚果 洗发水 面膜 新款 正品 包邮 官方 旗舰 限时 特价 无线 蓝牙 轻薄 大容量 快充 防水 静音 智能 家用 办公 学生 男女 通用 经典 升级 加厚 便携 质量 很好 物流 很快 包装 完好 性价比 高 满意 推荐 一般 还行 不错 有点 失望 客服 态度 好评 差评 颜色 尺寸 合适 偏大 偏小 订单 已 发货 待 付款 退款 处理 中 完成 取消")
	jaWords    = strings.Fields("東京都 大阪府 名古屋市 福岡市 札幌市 横浜市 京都市 神戸市 株式会社 商品 注文 発送 済み 在庫 あり なし 新品 中古 送料 無料 税込 円 レビュー 満足 とても 良い 普通 残念 配送 早い 遅い 梱包 丁寧 ワイヤレス イヤホン ノート パソコン コーヒー お茶 シャツ 靴 かばん 時計 カメラ")
	jaFamily   = []string{"佐藤", "鈴木", "高橋", "田中", "伊藤", "渡辺", "山本", "中村", "小林", "加藤", "吉田", "山田", "佐々木", "山口", "松本", "井上"}
	jaGiven    = []string{"太郎", "花子", "翔", "陽菜", "蓮", "結衣", "大輝", "美咲", "健一", "由美", "直樹", "さくら", "ゆうき", "あおい", "拓海", "真央"}
)

func (g *gen) zhName() string {
	n := 1 + g.r.IntN(2)
	b := []rune{zhSurnames[g.r.IntN(len(zhSurnames))]}
	for i := 0; i < n; i++ {
		b = append(b, zhGiven[g.r.IntN(len(zhGiven))])
	}
	return string(b)
}

func (g *gen) zhAddr() string {
	road := []rune{zhRoads[g.r.IntN(len(zhRoads))], zhRoads[g.r.IntN(len(zhRoads))]}
	return fmt.Sprintf("%s%s区%s路%d号", g.pick(zhCities...), string(zhGiven[g.r.IntN(len(zhGiven))]), string(road), 1+g.r.IntN(999))
}

func (g *gen) zhPhrase(words []string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(words[g.r.IntN(len(words))])
	}
	return b.String()
}

func (g *gen) cjkData(w *bytes.Buffer, size int) {
	for w.Len() < size {
		switch g.r.IntN(5) {
		case 0:
			fmt.Fprintf(w, `{"order_id":"%s","customer":"%s","address":"%s","item":"%s","price":%d.%02d,"status":"%s","review":"%s"}`+"\n",
				g.ident(), g.zhName(), g.zhAddr(), g.zhPhrase(zhWords, 3+g.r.IntN(5)), g.r.IntN(3000), g.r.IntN(100),
				g.zhPhrase(zhWords, 2), g.zhPhrase(zhWords, 4+g.r.IntN(10))+"。")
		case 1:
			w.WriteString("| 姓名 | 城市 | 地址 | 金额 |\n|---|---|---|---:|\n")
			for k := 0; k < 3+g.r.IntN(10); k++ {
				fmt.Fprintf(w, "| %s | %s | %s | %d |\n", g.zhName(), g.pick(zhCities...), g.zhAddr(), g.r.IntN(100000))
			}
		case 2:
			for k := 0; k < 3+g.r.IntN(8); k++ {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", g.zhName(), g.zhPhrase(zhWords, 2+g.r.IntN(4)), g.when(), g.zhPhrase(zhWords, 3+g.r.IntN(12))+g.pick("。", "！", "，", ""))
			}
		case 3:
			fmt.Fprintf(w, "name: %s%s\naddress: %s%s\nitem: %s\nnote: %s\n---\n", g.pick(jaFamily...), g.pick(jaGiven...),
				g.pick(strings.Fields("東京都 大阪府 名古屋市 福岡市 札幌市")...), g.zhPhrase(jaWords, 1), g.zhPhrase(jaWords, 2+g.r.IntN(4)), g.zhPhrase(jaWords, 3+g.r.IntN(8))+"。")
		default:
			fmt.Fprintf(w, "用户%s（%s）于%s提交订单%s，商品：%s，收货地址：%s。\n", g.zhName(), g.ident(), g.when(), g.ident(), g.zhPhrase(zhWords, 2+g.r.IntN(5)), g.zhAddr())
		}
	}
}
