import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationConfig;
import com.fasterxml.jackson.databind.BeanProperty;
import com.fasterxml.jackson.databind.deser.Deserializers;
import com.fasterxml.jackson.databind.deser.ValueInstantiator;
import com.fasterxml.jackson.databind.deser.std.ReferenceTypeDeserializer;
import com.fasterxml.jackson.databind.jsontype.TypeDeserializer;
import com.fasterxml.jackson.databind.jsontype.TypeSerializer;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.Serializers;
import com.fasterxml.jackson.databind.ser.std.ReferenceTypeSerializer;
import com.fasterxml.jackson.databind.type.ReferenceType;
import com.fasterxml.jackson.databind.type.TypeBindings;
import com.fasterxml.jackson.databind.type.TypeFactory;
import com.fasterxml.jackson.databind.type.TypeModifier;
import com.fasterxml.jackson.databind.util.NameTransformer;
import com.fasterxml.jackson.jaxrs.json.JacksonJsonProvider;
import java.lang.reflect.Type;
import java.math.BigDecimal;
import java.util.Optional;
import javax.ws.rs.client.Client;
import javax.ws.rs.core.HttpHeaders;
import org.jboss.resteasy.client.jaxrs.ResteasyClientBuilder;
import org.jboss.resteasy.client.jaxrs.ResteasyWebTarget;
import org.referee.client.model.ClaimSeat;
import org.referee.client.model.CreateChoiceGame;
import org.referee.client.model.GameCreated;
import org.referee.client.model.GameRecord;
import org.referee.client.model.MoveAccepted;
import org.referee.client.model.OneMove;
import org.referee.client.model.SeatSpec;
import org.referee.client.model.Turn;
import org.referee.client.params.ClaimSeatParams;
import org.referee.client.params.GetTurnParams;
import org.referee.client.params.SubmitMoveParams;
import org.referee.client.spec.GamesApiSpec;

/**
 * A bot on the Java client that openapi-generator-plus makes from openapi/openapi.json, run on
 * RESTEasy's JAX-RS client: creates a CHOICE game with an open seat and a house bot, claims the
 * open seat, plays the first legal move of each turn until the game is over, and prints the
 * game's record (as the client read it) on standard output. Usage: {@code PlayGame URL}.
 */
public final class PlayGame {

    private static final BigDecimal WAIT_S = BigDecimal.valueOf(30);

    public static void main(String[] args) throws java.io.IOException {
        String url = args[0];
        // the generated ApiProviders' ObjectMapper settings, but with OptionalModule for Jackson's
        // Jdk8Module and JavaTimeModule, which Debian 12 does not package (the contract has no
        // date or time); unknown fields fail, so that the client must read everything sent.
        // Properties come from the models' annotated fields alone: a getter such as getAFinal()
        // (the field of "final") would otherwise be written as a property "afinal" too.
        ObjectMapper mapper = new ObjectMapper()
                .setSerializationInclusion(JsonInclude.Include.NON_NULL)
                .disable(MapperFeature.AUTO_DETECT_GETTERS, MapperFeature.AUTO_DETECT_IS_GETTERS)
                .registerModule(new OptionalModule());
        Client client = new ResteasyClientBuilder().register(new JacksonJsonProvider(mapper)).build();
        try {
            GamesApiSpec organizer = games(client, url, null);
            CreateChoiceGame create = new CreateChoiceGame()
                    .addSeat(new SeatSpec())
                    .addSeat(new SeatSpec().bot(SeatSpec.BotEnum.STRONG));
            GameCreated game = organizer.createGame(null, create);
            String id = game.getId();
            String token = organizer.claimSeat(new ClaimSeatParams(id), new ClaimSeat().name("java"))
                    .getToken();
            GamesApiSpec seat = games(client, url, token);
            Turn turn = seat.getTurn(new GetTurnParams(id).wait(WAIT_S));
            int decisions = 0;
            while (turn.getStatus() != Turn.StatusEnum.FINISHED) {
                if (turn.getStatus() == Turn.StatusEnum.YOUR_TURN) {
                    OneMove move = new OneMove().seq(turn.getSeq()).move(turn.getLegalMoves().get(0));
                    MoveAccepted accepted = seat.submitMove(new SubmitMoveParams(id).wait(WAIT_S), move);
                    turn = accepted.getTurn();
                    decisions++;
                } else {
                    turn = seat.getTurn(new GetTurnParams(id).wait(WAIT_S));
                }
            }
            GameRecord record = organizer.getRecord(id);
            System.err.println("game " + id + ": " + decisions + " decisions, finished");
            System.out.println(mapper.writeValueAsString(record));
        } catch (javax.ws.rs.WebApplicationException error) {
            throw new IllegalStateException(
                    error.getMessage() + ": " + error.getResponse().readEntity(String.class), error);
        } finally {
            client.close();
        }
    }

    /**
     * The generated JAX-RS interface as a RESTEasy proxy, sending a seat's token if given (the
     * generated GamesApiImpl wraps such a proxy, but only through injection: it has no setter).
     */
    private static GamesApiSpec games(Client client, String url, String token) {
        ResteasyWebTarget target = (ResteasyWebTarget) client.target(url);
        if (token != null) {
            target.register((javax.ws.rs.client.ClientRequestFilter) request ->
                    request.getHeaders().putSingle(HttpHeaders.AUTHORIZATION, "Bearer " + token));
        }
        return target.proxy(GamesApiSpec.class);
    }

    /**
     * java.util.Optional as Jackson's reference type (null or absent: empty), which the generated
     * models use for every nullable property, through databind's public ReferenceType API.
     */
    static final class OptionalModule extends SimpleModule {

        @Override
        public void setupModule(SetupContext context) {
            super.setupModule(context);
            context.addTypeModifier(new TypeModifier() {
                @Override
                public JavaType modifyType(JavaType type, Type jdkType, TypeBindings bindings,
                        TypeFactory factory) {
                    if (type.isReferenceType() || type.isContainerType()
                            || type.getRawClass() != Optional.class) {
                        return type;
                    }
                    return ReferenceType.upgradeFrom(type, type.containedTypeOrUnknown(0));
                }
            });
            context.addSerializers(new Serializers.Base() {
                @Override
                public JsonSerializer<?> findReferenceSerializer(SerializationConfig config,
                        ReferenceType type, BeanDescription description,
                        TypeSerializer contentTypeSerializer, JsonSerializer<Object> contentSerializer) {
                    return type.hasRawClass(Optional.class)
                            ? new OptionalSerializer(type, contentTypeSerializer, contentSerializer)
                            : null;
                }
            });
            context.addDeserializers(new Deserializers.Base() {
                @Override
                public JsonDeserializer<?> findReferenceDeserializer(ReferenceType type,
                        DeserializationConfig config, BeanDescription description,
                        TypeDeserializer contentTypeDeserializer, JsonDeserializer<?> contentDeserializer) {
                    return type.hasRawClass(Optional.class)
                            ? new OptionalDeserializer(type, contentTypeDeserializer, contentDeserializer)
                            : null;
                }
            });
        }
    }

    static final class OptionalSerializer extends ReferenceTypeSerializer<Optional<?>> {

        OptionalSerializer(ReferenceType type, TypeSerializer contentTypeSerializer,
                JsonSerializer<Object> contentSerializer) {
            super(type, false, contentTypeSerializer, contentSerializer);
        }

        private OptionalSerializer(OptionalSerializer base, BeanProperty property,
                TypeSerializer contentTypeSerializer, JsonSerializer<?> contentSerializer,
                NameTransformer unwrapper, Object suppressableValue, boolean suppressNulls) {
            super(base, property, contentTypeSerializer, contentSerializer, unwrapper,
                    suppressableValue, suppressNulls);
        }

        @Override
        protected ReferenceTypeSerializer<Optional<?>> withResolved(BeanProperty property,
                TypeSerializer contentTypeSerializer, JsonSerializer<?> contentSerializer,
                NameTransformer unwrapper) {
            return new OptionalSerializer(this, property, contentTypeSerializer, contentSerializer,
                    unwrapper, _suppressableValue, _suppressNulls);
        }

        @Override
        public ReferenceTypeSerializer<Optional<?>> withContentInclusion(Object suppressableValue,
                boolean suppressNulls) {
            return new OptionalSerializer(this, _property, _valueTypeSerializer, _valueSerializer,
                    _unwrapper, suppressableValue, suppressNulls);
        }

        @Override
        protected boolean _isValuePresent(Optional<?> value) {
            return value.isPresent();
        }

        @Override
        protected Object _getReferenced(Optional<?> value) {
            return value.get();
        }

        @Override
        protected Object _getReferencedIfPresent(Optional<?> value) {
            return value.orElse(null);
        }
    }

    static final class OptionalDeserializer extends ReferenceTypeDeserializer<Optional<?>> {

        OptionalDeserializer(JavaType type, TypeDeserializer contentTypeDeserializer,
                JsonDeserializer<?> contentDeserializer) {
            super(type, null, contentTypeDeserializer, contentDeserializer);
        }

        @Override
        protected ReferenceTypeDeserializer<Optional<?>> withResolved(
                TypeDeserializer contentTypeDeserializer, JsonDeserializer<?> contentDeserializer) {
            return new OptionalDeserializer(_fullType, contentTypeDeserializer, contentDeserializer);
        }

        @Override
        public Optional<?> getNullValue(DeserializationContext context) {
            return Optional.empty();
        }

        @Override
        public Optional<?> referenceValue(Object contents) {
            return Optional.ofNullable(contents);
        }

        @Override
        public Optional<?> updateReference(Optional<?> reference, Object contents) {
            return Optional.ofNullable(contents);
        }

        @Override
        public Object getReferenced(Optional<?> reference) {
            return reference.orElse(null);
        }
    }
}
