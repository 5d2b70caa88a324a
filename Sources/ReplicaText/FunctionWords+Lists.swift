// Function words by language (ISO 639-1), one string each, words separated by spaces. Generated from
// the stop-word lists of the Snowball project (snowballstem.org, BSD licence), as PostgreSQL ships them in
// tsearch_data (Turkish and Nepali are PostgreSQL's own lists, PostgreSQL licence), with content words
// taken out (Spanish "estado", "sentido"; Russian numbers); Greek, Arabic and Hindi are
// replica's own short lists of articles, pronouns, prepositions, conjunctions and question words, and
// so are Chinese and Japanese: their question words (什么, 哪里, 何, どこ), particles (的, 了, 吗, の, は,
// を) and demonstratives, as ICU's dictionaries cut them (XQuAD-R zh lexical nDCG@10, simulated: 0.826
// without, 0.831 with; JSQuAD 0.941 and 0.943; a longer Chinese list of adverbs and conjunctions did worse).
// Korean and Thai are replica's own short lists too: Korean's question words with the particles they
// are asked with (무엇을, 어디에), conjunctions and bare nouns of grammar (것, 수), since its particles are
// joined to their words; Thai's question words, polite particles and most common grammatical words, as
// ICU's dictionary cuts them (เมื่อไหร่ is cut into เมื่อ and ไหร่: both are listed). No Korean or Thai
// set was at hand to measure them on.
// Vietnamese has none: its compounds are made of syllables that are function words alone ("hàng không",
// aviation), and a list of them lost 0.010 nDCG@10 on XQuAD-R vi.
// English is FTSPattern's own list, kept as it was.

extension FunctionWords {
    static let lists: [String: String] = [
        "ar": """
        في من إلى الى على عن مع ما ماذا متى أين اين كيف لماذا كم هل أي اي التي الذي الذين اللذان اللتان اللواتي هو
        هي هم هن أنا نحن أنت هذا هذه ذلك تلك هؤلاء أن ان إن أو او و ثم لا لم لن قد كان كانت كانوا يكون تكون بين عند
        بعد قبل حتى كل بعض غير أيضا ايضا منذ خلال حيث عندما إذا اذا لكن له لها لهم به بها فيه فيها منه منها عليه
        عليها
        """,
        "da": """
        og i jeg det at en den til er som på de med han af for ikke der var mig sig men et har om vi min havde ham
        hun nu over da fra du ud sin dem os op man hans hvor eller hvad skal selv her alle vil blev kunne ind når
        være dog noget ville jo deres efter ned skulle denne end dette mit også under have dig anden hende mine alt
        meget sit sine vor mod disse hvis din nogle hos blive mange ad bliver hendes været thi jer sådan
        """,
        "de": """
        aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes anderm andern
        anderr anders auch auf aus bei bin bis bist da damit dann der den des dem die das daß derselbe derselben
        denselben desselben demselben dieselbe dieselben dasselbe dazu dein deine deinem deinen deiner deines denn
        derer dessen dich dir du dies diese diesem diesen dieser dieses doch dort durch ein eine einem einen einer
        eines einig einige einigem einigen einiger einiges einmal er ihn ihm es etwas euer eure eurem euren eurer
        eures für gegen gewesen hab habe haben hat hatte hatten hier hin hinter ich mich mir ihr ihre ihrem ihren
        ihrer ihres euch im in indem ins ist jede jedem jeden jeder jedes jene jenem jenen jener jenes jetzt kann
        kein keine keinem keinen keiner keines können könnte machen man manche manchem manchen mancher manches mein
        meine meinem meinen meiner meines mit muss musste nach nicht nichts noch nun nur ob oder ohne sehr sein
        seine seinem seinen seiner seines selbst sich sie ihnen sind so solche solchem solchen solcher solches soll
        sollte sondern sonst über um und uns unse unsem unsen unser unses unter viel vom von vor während war waren
        warst was weg weil weiter welche welchem welchen welcher welches wenn werde werden wie wieder will wir wird
        wirst wo wollen wollte würde würden zu zum zur zwar zwischen
        """,
        "el": """
        ο η το οι τα του της των τον την τους τις ένα ένας μια μία ενός μιας και κι ή να θα δεν δε μη μην σε σ στο
        στη στην στον στα στους στις στης στου από με για ως προς κατά μετά χωρίς μέχρι έως παρά πριν που πού ποιος
        ποια ποιο ποιοι ποιες ποιου ποιας ποιων ποιον ποιαν πόσα πόσοι πόσες πόσο πόση πόσων πότε πώς γιατί τι είναι
        ήταν είχε έχει έχουν είχαν είμαι αυτό αυτή αυτός αυτά αυτοί αυτές αυτού αυτής αυτών αυτόν αυτήν αυτούς
        εκείνο εκείνη εκείνος εκείνα ότι αλλά όμως επίσης όπως όταν αν εάν ενώ οποίος οποία οποίο οποίοι οποίες
        οποίου οποίας οποίων οποίον τη μας σας μου σου
        """,
        "es": """
        de la que el en y a los del se las por un para con no una su al lo como más pero sus le ya o este sí porque
        esta entre cuando muy sin sobre también me hasta hay donde quien desde todo nos durante todos uno les ni
        contra otros ese eso ante ellos e esto mí antes algunos qué unos yo otro otras otra él tanto esa estos mucho
        quienes nada muchos cual poco ella estar estas algunas algo nosotros mi mis tú te ti tu tus ellas nosotras
        vosostros vosostras os mío mía míos mías tuyo tuya tuyos tuyas suyo suya suyos suyas nuestro nuestra
        nuestros nuestras vuestro vuestra vuestros vuestras esos esas estoy estás está estamos estáis están esté
        estés estemos estéis estén estaré estarás estará estaremos estaréis estarán estaría estarías estaríamos
        estaríais estarían estaba estabas estábamos estabais estaban estuve estuviste estuvo estuvimos estuvisteis
        estuvieron estuviera estuvieras estuviéramos estuvierais estuvieran estuviese estuvieses estuviésemos
        estuvieseis estuviesen estando estad he has ha hemos habéis han haya hayas hayamos hayáis hayan habré habrás
        habrá habremos habréis habrán habría habrías habríamos habríais habrían había habías habíamos habíais habían
        hube hubiste hubo hubimos hubisteis hubieron hubiera hubieras hubiéramos hubierais hubieran hubiese hubieses
        hubiésemos hubieseis hubiesen habiendo habido habida habidos habidas soy eres es somos sois son sea seas
        seamos seáis sean seré serás será seremos seréis serán sería serías seríamos seríais serían era eras éramos
        erais eran fui fuiste fue fuimos fuisteis fueron fuera fueras fuéramos fuerais fueran fuese fueses fuésemos
        fueseis fuesen tengo tienes tiene tenemos tenéis tienen tenga tengas tengamos tengáis tengan tendré tendrás
        tendrá tendremos tendréis tendrán tendría tendrías tendríamos tendríais tendrían tenía tenías teníamos
        teníais tenían tuve tuviste tuvo tuvimos tuvisteis tuvieron tuviera tuvieras tuviéramos tuvierais tuvieran
        tuviese tuvieses tuviésemos tuvieseis tuviesen teniendo tenido tenida tenidos tenidas tened
        """,
        "fi": """
        olla olen olet on olemme olette ovat ole oli olisi olisit olisin olisimme olisitte olisivat olit olin olimme
        olitte olivat ollut olleet en et ei emme ette eivät minä minun minut minua minussa minusta minuun minulla
        minulta minulle sinä sinun sinut sinua sinussa sinusta sinuun sinulla sinulta sinulle hän hänen hänet häntä
        hänessä hänestä häneen hänellä häneltä hänelle me meidän meidät meitä meissä meistä meihin meillä meiltä
        meille te teidän teidät teitä teissä teistä teihin teillä teiltä teille he heidän heidät heitä heissä heistä
        heihin heillä heiltä heille tämä tämän tätä tässä tästä tähän tallä tältä tälle tänä täksi tuo tuon tuotä
        tuossa tuosta tuohon tuolla tuolta tuolle tuona tuoksi se sen sitä siinä siitä siihen sillä siltä sille
        siksi nämä näiden näitä näissä näistä näihin näillä näiltä näille näinä näiksi nuo noiden noita noissa
        noista noihin noilla noilta noille noina noiksi ne niiden niitä niissä niistä niihin niillä niiltä niille
        niinä niiksi kuka kenen kenet ketä kenessä kenestä keneen kenellä keneltä kenelle kenenä keneksi ketkä
        keiden keitä keissä keistä keihin keillä keiltä keille keinä keiksi mikä minkä mitä missä mistä mihin millä
        miltä mille miksi mitkä joka jonka jota jossa josta johon jolla jolta jolle jona joksi jotka joiden joita
        joissa joista joihin joilla joilta joille joina joiksi että ja jos koska kuin mutta niin sekä tai vaan vai
        vaikka kanssa mukaan noin poikki yli kun nyt itse
        """,
        "fr": """
        au aux avec ce ces dans de des du elle en et eux il je la le leur lui ma mais me même mes moi mon ne nos
        notre nous on ou par pas pour qu que qui sa se ses son sur ta te tes toi ton tu un une vos votre vous c d j
        l à m n s t y été étée étées étés étant étante étants étantes suis es est sommes êtes sont serai seras sera
        serons serez seront serais serait serions seriez seraient étais était étions étiez étaient fus fut fûmes
        fûtes furent sois soit soyons soyez soient fusse fusses fût fussions fussiez fussent ayant ayante ayantes
        ayants eu eue eues eus ai as avons avez ont aurai auras aura aurons aurez auront aurais aurait aurions
        auriez auraient avais avait avions aviez avaient eut eûmes eûtes eurent aie aies ait ayons ayez aient eusse
        eusses eût eussions eussiez eussent
        """,
        "hi": """
        का की के है हैं था थी थे में से को पर और या ने कि यह वह ये वे इस उस इन उन इसे उसे इसका उसका इसकी उसकी इसके
        उसके क्या कौन कौनसा कौनसी कब कहाँ कहां कैसे क्यों कितने कितना कितनी किस किसे किसको किसने किसका किसकी किसके
        जो जिस जिसे जिसने जिन भी तो ही एक द्वारा लिए लिये साथ तक हो होता होती होते होने हुआ हुई हुए गया गई गए गये
        अपने अपना अपनी वाले वाला वाली
        """,
        "hu": """
        a ahogy ahol aki akik akkor alatt által általában amely amelyek amelyekben amelyeket amelyet amelynek ami
        amit amolyan amíg amikor át abban ahhoz annak arra arról az azok azon azt azzal azért aztán azután azonban
        bár be belül benne cikk cikkek cikkeket csak de e eddig egész egy egyes egyetlen egyéb egyik egyre ekkor el
        elég ellen elő először előtt első én éppen ebben ehhez emilyen ennek erre ez ezt ezek ezen ezzel ezért és
        fel felé hanem hiszen hogy hogyan igen így illetve ill. ill ilyen ilyenkor ison ismét itt jó jól jobban kell
        kellett keresztül keressünk ki kívül között közül legalább lehet lehetett legyen lenne lenni lesz lett maga
        magát majd már más másik meg még mellett mert mely melyek mi mit míg miért milyen mikor minden mindent
        mindenki mindig mint mintha mivel most nagy nagyobb nagyon ne néha nekem neki nem néhány nélkül nincs olyan
        ott össze ő ők őket pedig persze rá s saját sem semmi sok sokat sokkal számára szemben szerint szinte talán
        tehát teljes tovább továbbá több úgy ugyanis új újabb újra után utána utolsó vagy vagyis valaki valami
        valamint való vagyok van vannak volt voltam voltak voltunk vissza vele viszont volna
        """,
        "it": """
        ad al allo ai agli all agl alla alle con col coi da dal dallo dai dagli dall dagl dalla dalle di del dello
        dei degli dell degl della delle in nel nello nei negli nell negl nella nelle su sul sullo sui sugli sull
        sugl sulla sulle per tra contro io tu lui lei noi voi loro mio mia miei mie tuo tua tuoi tue suo sua suoi
        sue nostro nostra nostri nostre vostro vostra vostri vostre mi ti ci vi lo la li le gli ne il un uno una ma
        ed se perché anche come dov dove che chi cui non più quale quanto quanti quanta quante quello quelli quella
        quelle questo questi questa queste si tutto tutti a c e i l o ho hai ha abbiamo avete hanno abbia abbiate
        abbiano avrò avrai avrà avremo avrete avranno avrei avresti avrebbe avremmo avreste avrebbero avevo avevi
        aveva avevamo avevate avevano ebbi avesti ebbe avemmo aveste ebbero avessi avesse avessimo avessero avendo
        avuto avuta avuti avute sono sei è siamo siete sia siate siano sarò sarai sarà saremo sarete saranno sarei
        saresti sarebbe saremmo sareste sarebbero ero eri era eravamo eravate erano fui fosti fu fummo foste furono
        fossi fosse fossimo fossero essendo faccio fai facciamo fanno faccia facciate facciano farò farai farà
        faremo farete faranno farei faresti farebbe faremmo fareste farebbero facevo facevi faceva facevamo facevate
        facevano feci facesti fece facemmo faceste fecero facessi facesse facessimo facessero facendo sto stai sta
        stiamo stanno stia stiate stiano starò starai starà staremo starete staranno starei staresti starebbe
        staremmo stareste starebbero stavo stavi stava stavamo stavate stavano stetti stesti stette stemmo steste
        stettero stessi stesse stessimo stessero stando
        """,
        "nb": """
        og i jeg det at en et den til er som på de med han av ikke ikkje der så var meg seg men ett har om vi min
        mitt ha hadde hun nå over da ved fra du ut sin dem oss opp man kan hans hvor eller hva skal selv sjøl her
        alle vil bli ble blei blitt kunne inn når være kom noen noe ville dere deres kun ja etter ned skulle denne
        for deg si sine sitt mot å meget hvorfor dette disse uten hvordan ingen din ditt blir samme hvilken hvilke
        sånn inni mellom vår hver hvem vors hvis både bare enn fordi før mange også slik vært båe begge siden dykk
        dykkar dei deira deires deim di då eg ein eit eitt elles honom hjå ho hoe henne hennar hennes hoss hossen
        ingi inkje korleis korso kva kvar kvarhelst kven kvi kvifor me medan mi mine mykje no nokon noka nokor noko
        nokre sia sidan so somt somme um upp vere vore verte vort varte vart
        """,
        "ne": """
        अक्सर अगाडि अगाडी अझै अनुसार अन्तर्गत अन्य अन्यथा अब अरु अरू अर्का अर्की अर्को अर्थात अर्थात् अर्ब अलग
        अलिकति असार आइतवार आए आज आठ आत्म आदि आफू आफ्नै आफ्नो आयो आश्विन उदाहरण उन उप उही एउटै एक एकदम एकै ओठ औं कति
        कतै कत्रा कत्री कत्रो करोड कस कसरी कसै कस्ता कस्ती कस्तो कहिल्यै कहीं का कार्तिक कि किन किनभने कुन कुनै कुरा
        कृपया के केहि केही को कोही क्रमशः खर्ब गयौ चाँडै चार चाले चाहनुहुन्छ चाहन्छु चाहिए चैत चौथो छ छन् छु छू छैन
        छौँ छौं जताततै जति जत्रा जत्री जत्रो जब जबकि जस जस्ता जस्ती जस्तो जस्तोसुकै जहाँ जान जाहिर जुन जे जेठ जो
        जोसुकै ठीक त तत्काल तथा तदनुसार तपाई तपाईं तर तल तापनि तापनी तिन तिनी तिमी तिर ती तीन तुरुन्तै तेस्कारण
        तेस्रो त्यसकारण त्यसपछि त्यसमा त्यसैले त्यहाँ त्यो त्सपछि त्सैले थिए थिएन थिएनन् थियो थोरै दस दिए दिनुभएको
        दिनुहुन्छ दुई देख देखि देखिन्छ देखियो देखे देखेको देखेर देख्न दोश्रो दोस्रो धेरै न नजिकै नत्र नयाँ नि निम्ति
        निम्न निम्नानुसार निर्दिष्ट नै नौ पक्का पक्कै पछि पछिल्लो पटक पनि पर्छ पर्थ्यो पर्याप्त पर्सी पहिले पहिलो
        पहिल्यै पाँच पाँचौं पूर्व पौष प्रति प्रतेक प्रत्येक प्रथम प्लस फागुन फेरि फेरी बने बन्द बन्न बरु बाटो बारे
        बाहिर बाहेक बिरुद्ध बिशेष बिहिवार बीच बुधवार भए भदौ भन् भर भित्र भित्री भोलि भोली म मंसिर मङ्गलवार महिना मा
        माघ मात्र माथि मुख्य मेरो यति यत्ति यत्रा यत्री यत्रो यथोचित यदि यद्यपि यस यसरी यसो यस्ता यस्ती यस्तो यहाँ
        या यिन यिनी यी यो र रही रहेका रहेको राखे राख्छ राम्रो रूप लगभग लाई लाख लागि ले वरिपरि वरीपरी वर्ष वास्तवमा
        वाहेक विरुद्ध विशेष वैशाख शनिवार शायद शुक्रवार सँग सँगै संग संगै सक्छ सट्टा सधै सधैं सबै समय सम्भव सम्म सय
        सही साँच्चै साउन सात साथ साथै सायद सारा सुन्ना सो सोध्न सोमवार सोही स्पष्ट हजार हप्ता हरे हरेक हामी हाम्रो
        हिजो हुन्छ होला होस्
        """,
        "nl": """
        de en van ik te dat die in een hij het niet zijn is was op aan met als voor had er maar om hem dan zou of
        wat mijn men dit zo door over ze zich bij ook tot je mij uit der daar haar naar heb hoe heeft hebben deze u
        want nog zal me zij nu ge geen omdat iets worden toch al waren veel meer doen toen moet ben zonder kan hun
        dus alles onder ja eens hier wie werd altijd doch wordt wezen kunnen ons zelf tegen na reeds wil kon niets
        uw iemand geweest andere
        """,
        "pt": """
        de a o que e do da em um para com não uma os no se na por mais as dos como mas ao ele das à seu sua ou
        quando muito nos já eu também só pelo pela até isso ela entre depois sem mesmo aos seus quem nas me esse
        eles você essa num nem suas meu às minha numa pelos elas qual nós lhe deles essas esses pelas este dele tu
        te vocês vos lhes meus minhas teu tua teus tuas nosso nossa nossos nossas dela delas esta estes estas aquele
        aquela aqueles aquelas isto aquilo estou está estamos estão estive esteve estivemos estiveram estava
        estávamos estavam estivera estivéramos esteja estejamos estejam estivesse estivéssemos estivessem estiver
        estivermos estiverem hei há havemos hão houve houvemos houveram houvera houvéramos haja hajamos hajam
        houvesse houvéssemos houvessem houver houvermos houverem houverei houverá houveremos houverão houveria
        houveríamos houveriam sou somos são era éramos eram fui foi fomos foram fora fôramos seja sejamos sejam
        fosse fôssemos fossem for formos forem serei será seremos serão seria seríamos seriam tenho tem temos tém
        tinha tínhamos tinham tive teve tivemos tiveram tivera tivéramos tenha tenhamos tenham tivesse tivéssemos
        tivessem tiver tivermos tiverem terei terá teremos terão teria teríamos teriam
        """,
        "ru": """
        и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее мне было вот от
        меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был него до вас нибудь опять уж вам
        ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем была сам чтоб без будто
        чего раз тоже себе под будет ж тогда кто этот того потому этого какой совсем ним здесь этом почти мой тем
        чтобы нее сейчас были куда зачем всех никогда можно при наконец об другой хоть после над больше тот через
        эти нас про всего них какая много разве эту моя впрочем свою этой перед иногда чуть том нельзя такой им
        более всегда конечно всю между
        """,
        "sv": """
        och det att i en jag hon som han på den med var sig för så till är men ett om hade de av icke mig du henne
        då sin nu har inte hans honom skulle hennes där min man ej vid kunde något från ut när efter upp vi dem vara
        vad över än dig kan sina här ha mot alla under någon eller allt mycket sedan ju denna själv detta åt utan
        varit hur ingen mitt ni bli blev oss din dessa några deras blir mina samma vilken er sådan vår blivit dess
        inom mellan sådant varför varje vilka ditt vem vilket sitta sådana vart dina vars vårt våra ert era vilkas
        """,
        "ja": """
        何 なに なん どこ だれ 誰 いつ どの どれ どんな どう なぜ 幾つ いくつ いくら どちら どのよう か の は が を に で と も へ
        や から まで より です ます でした ました した する され れる られる ある いる こと もの ため よう これ それ あれ この
        その あの ですか ますか
        """,
        "ko": """
        무엇 무엇을 무엇이 무엇은 무엇인가 무엇인가요 무엇입니까 무슨 누가 누구 누구를 누구의 누구인가요 어디 어디에 어디에서
        어디인가요 언제 언제인가요 어떻게 왜 몇 얼마 얼마나 어느 어떤 그리고 그러나 하지만 또는 또한 및 등 그 이 저 것 수
        """,
        "th": """
        ใคร อะไร ที่ไหน ไหน เมื่อไร เมื่อไหร่ อย่างไร ยังไง ทำไม กี่ เท่าไร เท่าไหร่ ใด หรือไม่ ไหม ครับ ค่ะ คะ ที่ ของ
        และ ใน เป็น คือ ซึ่ง หรือ กับ โดย จาก แต่ นี้ นั้น เพื่อ ว่า จะ ได้ ให้ มี ถูก แห่ง
        """,
        "tr": """
        acaba ama aslında az bazı belki biri birkaç birşey biz bu çok çünkü da daha de defa diye eğer en gibi hem
        hep hepsi her hiç için ile ise kez ki kim mı mu mü nasıl ne neden nerde nerede nereye niçin niye o sanki şey
        siz şu tüm ve veya ya yani
        """,
        "zh": """
        什么 哪 哪个 哪些 哪里 哪一 谁 多少 几 怎么 怎样 如何 为什么 何 吗 呢 吧 是否 的 了 是 在 和 与 及 或 也 都 就 被
        把 对 从 到 由 于 以 为 其 之 这 那 这个 那个 这些 那些 一个
        """,
    ]
}
